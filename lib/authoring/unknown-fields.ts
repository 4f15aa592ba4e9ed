/**
 * Fields a run's input has that its schema does not name. zod's `z.object()` drops such a field
 * silently (a misspelt `dryRun: true` would start a run without it); Logbook refuses it instead,
 * with a 400 naming the field, at every edge that checks a run input (run-input.ts). A schema that
 * means to take extra fields says so: `z.looseObject()` (or `.passthrough()`) keeps them,
 * `.catchall(schema)` checks them; `z.strictObject()` refuses them in zod itself.
 *
 * Only the input side of the schema is read (zod 4's `_zod.def`, duck-typed: an application may
 * bring its own copy of zod): objects, and what wraps or holds them (optional, nullable, default,
 * readonly, catch, arrays, tuples, records, unions, pipes and transforms by their input, lazy).
 * An intersection is not looked into (each side names only its own fields). Called only on a value
 * the schema accepted.
 */

interface Def {
  type?: string;
  shape?: Record<string, SchemaLike>;
  catchall?: SchemaLike;
  innerType?: SchemaLike;
  element?: SchemaLike;
  items?: SchemaLike[];
  rest?: SchemaLike | null;
  valueType?: SchemaLike;
  options?: SchemaLike[];
  in?: SchemaLike;
  getter?: () => SchemaLike;
}

interface SchemaLike {
  _zod?: { def?: Def };
  safeParse?(value: unknown): { success: boolean };
}

export type FieldPath = (string | number)[];

/** Depth past which a (recursive) schema is not followed further. */
const MAX_DEPTH = 64;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The paths of fields in `value` that `schema` does not name, in the order they appear. */
export function unknownFields(schema: unknown, value: unknown, path: FieldPath = [], depth = 0): FieldPath[] {
  const def = (schema as SchemaLike | undefined)?._zod?.def;
  if (!def || depth > MAX_DEPTH) return [];
  const next = (s: SchemaLike | undefined, v: unknown, at: FieldPath) => (s ? unknownFields(s, v, at, depth + 1) : []);
  switch (def.type) {
    case 'object': {
      if (!isRecord(value)) return [];
      const catchall = def.catchall?._zod?.def?.type;
      return Object.entries(value).flatMap(([key, field]) => {
        const known = def.shape && Object.hasOwn(def.shape, key) ? def.shape[key] : undefined;
        if (known) return next(known, field, [...path, key]);
        if (catchall === undefined) return [[...path, key]];
        return catchall === 'unknown' || catchall === 'any' ? [] : next(def.catchall, field, [...path, key]);
      });
    }
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return value === undefined || value === null ? [] : next(def.innerType, value, path);
    case 'array':
      return Array.isArray(value) ? value.flatMap((item, i) => next(def.element, item, [...path, i])) : [];
    case 'tuple':
      return Array.isArray(value) ? value.flatMap((item, i) => next(def.items?.[i] ?? def.rest ?? undefined, item, [...path, i])) : [];
    case 'record':
      return isRecord(value) ? Object.entries(value).flatMap(([key, item]) => next(def.valueType, item, [...path, key])) : [];
    case 'pipe':
      return next(def.in, value, path);
    case 'lazy':
      return def.getter ? next(def.getter(), value, path) : [];
    case 'union': {
      // The branches that take the value; none of them naming a field means it is unknown.
      let fewest: FieldPath[] | undefined;
      for (const option of def.options ?? []) {
        if (option.safeParse?.(value).success !== true) continue;
        const found = next(option, value, path);
        if (found.length === 0) return [];
        if (!fewest || found.length < fewest.length) fewest = found;
      }
      return fewest ?? [];
    }
    default:
      return [];
  }
}
