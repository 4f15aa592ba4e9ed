import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { ConfigError } from '../core/errors.js';
import type { JsonSchemaInput } from '../authoring/types.js';

/** Enough for the model to fix its call; a schema with many branches can report dozens. */
const MAX_ISSUES = 10;

/**
 * A JSON Schema as a tool input, validated with Ajv (the validator the MCP SDK itself uses, so no
 * second engine enters the bundle). The dialect follows `$schema`; without one it is 2020-12, the
 * MCP default. Ajv is not strict: servers use keywords and formats of every vintage, and an
 * unknown keyword must not make a tool unusable. Arguments are never coerced or given defaults:
 * a tool runs on exactly what the log holds.
 */
export function jsonSchemaInput(schema: Record<string, unknown>, label: string): JsonSchemaInput<Record<string, unknown>> {
  let check: ValidateFunction;
  try {
    const { $schema, ...body } = schema;
    check = ajvFor(typeof $schema === 'string' ? $schema : undefined).compile(body);
  } catch (error) {
    throw new ConfigError(`${label}: its input schema cannot be compiled: ${error instanceof Error ? error.message : String(error)}`);
  }
  return {
    jsonSchema: schema,
    validate(args) {
      if (check(args)) return { ok: true, value: args as Record<string, unknown> };
      return { ok: false, issues: (check.errors ?? []).slice(0, MAX_ISSUES).map(issueOf) };
    },
  };
}

/** A fresh instance per schema: schemas from different servers may reuse the same `$id`. */
function ajvFor(dialect: string | undefined): Ajv {
  const options = { strict: false, allErrors: true, validateSchema: false, coerceTypes: false, useDefaults: false } as const;
  const ajv = dialect?.includes('2019-09') ? new Ajv2019(options) : dialect && /draft-0[4-7]/.test(dialect) ? new Ajv(options) : new Ajv2020(options);
  // ajv-formats is CommonJS: its default import is the module, whose `default` is the plugin.
  formats.default(ajv);
  return ajv;
}

function issueOf(error: ErrorObject): { path: (string | number)[]; message: string } {
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
