/**
 * A small JSON Schema (draft 2020-12) checker for what zod's toJSONSchema writes into a run's
 * pins (a tool's input, a signal's payload): type (and type lists), properties, required,
 * additionalProperties, enum, const, string lengths and pattern, number bounds, integer, items,
 * array lengths, anyOf/oneOf/allOf. The page checks an edit or a payload with it before sending,
 * so a person sees every bad field at once; the API checks again with the real zod schema and its
 * 400 is shown when a keyword this checker does not know (a format, a refinement) refuses it.
 * No DOM here: unit tests import it.
 */
import { plural } from './format.js';

export type JsonSchema = Record<string, unknown>;

export interface SchemaIssue {
  /** Dotted path under the value, e.g. `amountCents` or `items.0.sku`; empty for the value itself. */
  path: string;
  message: string;
}

const typeOf = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

function fitsType(value: unknown, type: string): boolean {
  switch (type) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'object':
      return typeOf(value) === 'object';
    default:
      return typeOf(value) === type;
  }
}

const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));
const show = (v: unknown) => JSON.stringify(v);

/** Every issue of `value` against `schema` (empty: it fits, as far as this checker knows). */
export function checkSchema(schema: JsonSchema, value: unknown, path = ''): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const at = (message: string, where = path) => issues.push({ path: where, message });

  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  if (types.length > 0 && !types.some((t) => fitsType(value, t))) {
    at(`expected ${types.join(' or ')}, got ${typeOf(value)}`);
    return issues;
  }
  if ('const' in schema && show(schema.const) !== show(value)) at(`must be ${show(schema.const)}`);
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => show(e) === show(value))) at(`must be one of ${schema.enum.map(show).join(', ')}`);

  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof schema.minLength === 'number' && length < schema.minLength) at(`at least ${plural(schema.minLength, 'character')}`);
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) at(`at most ${plural(schema.maxLength, 'character')}`);
    if (typeof schema.pattern === 'string') {
      let re: RegExp | undefined;
      try {
        re = new RegExp(schema.pattern, 'u');
      } catch {
        re = undefined; // a pattern JavaScript cannot read: the API decides
      }
      if (re && !re.test(value)) at(`must match ${schema.pattern}`);
    }
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) at(`at least ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) at(`at most ${schema.maximum}`);
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) at(`more than ${schema.exclusiveMinimum}`);
    if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) at(`less than ${schema.exclusiveMaximum}`);
    if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0 && !Number.isInteger(value / schema.multipleOf))
      at(`a multiple of ${schema.multipleOf}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) at(`at least ${plural(schema.minItems, 'item')}`);
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) at(`at most ${plural(schema.maxItems, 'item')}`);
    const prefix = Array.isArray(schema.prefixItems) ? (schema.prefixItems as JsonSchema[]) : [];
    value.forEach((item, i) => {
      const itemSchema = prefix[i] ?? (isSchema(schema.items) ? schema.items : undefined);
      if (itemSchema) issues.push(...checkSchema(itemSchema, item, join(path, i)));
    });
  }
  if (typeOf(value) === 'object') {
    const object = value as Record<string, unknown>;
    const properties = isSchema(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {};
    for (const key of Array.isArray(schema.required) ? (schema.required as string[]) : []) if (!(key in object)) at('required', join(path, key));
    for (const [key, v] of Object.entries(object)) {
      const property = properties[key];
      if (property) issues.push(...checkSchema(property, v, join(path, key)));
      else if (schema.additionalProperties === false) at('not a field of this schema', join(path, key));
      else if (isSchema(schema.additionalProperties)) issues.push(...checkSchema(schema.additionalProperties, v, join(path, key)));
    }
  }

  if (Array.isArray(schema.allOf)) for (const s of schema.allOf as JsonSchema[]) issues.push(...checkSchema(s, value, path));
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (!Array.isArray(options) || options.length === 0) continue;
    const results = (options as JsonSchema[]).map((s) => checkSchema(s, value, path));
    const fitting = results.filter((r) => r.length === 0).length;
    if (fitting === 0) {
      // One option: its own issues say more than "no option fits".
      if (results.length === 1) issues.push(...(results[0] ?? []));
      else at(`fits none of the ${options.length} allowed shapes`);
    } else if (key === 'oneOf' && fitting > 1) at('fits more than one of the allowed shapes');
  }
  return issues;
}

function isSchema(v: unknown): v is JsonSchema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One form field per property of an object schema, when each is simple enough for an input. */
export type FieldKind =
  { kind: 'string' } | { kind: 'number'; integer: boolean } | { kind: 'boolean' } | { kind: 'enum'; options: unknown[] } | { kind: 'json' };

export interface FormField {
  name: string;
  required: boolean;
  field: FieldKind;
  description?: string;
}

/**
 * The fields of a form for `schema`: each property of an object schema as a text, number, checkbox
 * or choice input, and anything else (a nested object, an array, a union) as a JSON field. Undefined
 * when the schema is not an object with properties: the form is one raw JSON field.
 */
export function formFields(schema: JsonSchema): FormField[] | undefined {
  if (schema.type !== 'object' || !isSchema(schema.properties)) return undefined;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(schema.properties as Record<string, JsonSchema>).map(([name, s]) => ({
    name,
    required: required.has(name),
    field: fieldKind(s),
    ...(typeof s.description === 'string' ? { description: s.description } : {}),
  }));
}

function fieldKind(s: JsonSchema): FieldKind {
  if (Array.isArray(s.enum) && s.enum.length > 0) return { kind: 'enum', options: s.enum };
  switch (s.type) {
    case 'string':
      return { kind: 'string' };
    case 'number':
    case 'integer':
      return { kind: 'number', integer: s.type === 'integer' };
    case 'boolean':
      return { kind: 'boolean' };
    default:
      return { kind: 'json' };
  }
}
