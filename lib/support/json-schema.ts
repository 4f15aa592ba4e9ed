import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';

/** Enough to fix a value; a schema with many branches can report dozens. */
const MAX_ISSUES = 10;

export type JsonSchemaIssue = { path: (string | number)[]; message: string };
export type JsonSchemaCheck = (value: unknown) => { ok: true } | { ok: false; issues: JsonSchemaIssue[] };

/**
 * A JSON Schema compiled with Ajv. The dialect follows `$schema`; without one it is 2020-12 (the
 * MCP default, and what zod writes). Not strict: schemas of every vintage use unknown keywords and
 * formats, and one must not make a schema unusable. Values are never coerced or given defaults:
 * what is checked is exactly what the log holds. Throws when the schema does not compile.
 */
export function compileJsonSchema(schema: Record<string, unknown>): JsonSchemaCheck {
  const { $schema, ...body } = schema;
  const check: ValidateFunction = ajvFor(typeof $schema === 'string' ? $schema : undefined).compile(body);
  return (value) => (check(value) ? { ok: true } : { ok: false, issues: (check.errors ?? []).slice(0, MAX_ISSUES).map(issueOf) });
}

/** A fresh instance per schema: schemas from different sources may reuse the same `$id`. */
function ajvFor(dialect: string | undefined): Ajv {
  const options = { strict: false, allErrors: true, validateSchema: false, coerceTypes: false, useDefaults: false } as const;
  const ajv = dialect?.includes('2019-09') ? new Ajv2019(options) : dialect && /draft-0[4-7]/.test(dialect) ? new Ajv(options) : new Ajv2020(options);
  // ajv-formats is CommonJS: its default import is the module, whose `default` is the plugin.
  formats.default(ajv);
  return ajv;
}

function issueOf(error: ErrorObject): JsonSchemaIssue {
  const path = pointerSegments(error.instancePath);
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  if (error.keyword === 'required' && params.missingProperty !== undefined) return { path: [...path, params.missingProperty], message: 'is required' };
  if (error.keyword === 'additionalProperties' && params.additionalProperty !== undefined) {
    return { path: [...path, params.additionalProperty], message: 'is not an allowed property' };
  }
  return { path, message: error.message ?? `fails ${error.keyword}` };
}

/** `/items/0/name` → ['items', 0, 'name'] (RFC 6901 unescaping). */
function pointerSegments(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^(0|[1-9][0-9]*)$/.test(s) ? Number(s) : s));
}
