// A run input's fields its schema does not name, found through every kind of schema that holds an
// object (the engine refuses them: typed-agents-api.test.ts checks the 400 over HTTP).
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseRunInput } from '../../../lib/authoring/run-input.js';
import { unknownFields } from '../../../lib/authoring/unknown-fields.js';
import { ValidationError } from '../../../lib/core/errors.js';

const found = (schema: z.ZodType, value: unknown) => {
  expect(schema.safeParse(value).success, 'the value fits the schema').toBe(true);
  return unknownFields(schema, value).map((p) => p.join('.'));
};

describe('unknownFields', () => {
  it('names the fields a z.object does not, at any depth, through wrappers, arrays, records and transforms', () => {
    const schema = z.object({
      a: z.string(),
      b: z.object({ c: z.number() }).optional(),
      d: z.array(z.object({ e: z.string() })),
      r: z.record(z.string(), z.object({ w: z.string() })),
      t: z.object({ p: z.string() }).transform((v) => v.p),
      df: z.object({ q: z.string() }).default({ q: '1' }),
      n: z.object({ x: z.string() }).nullable(),
      tu: z.tuple([z.object({ y: z.string() })]),
      lz: z.lazy(() => z.object({ z: z.string() })),
    });
    const fits = { a: 'x', b: { c: 1 }, d: [{ e: 'e' }], r: { k: { w: 'w' } }, t: { p: 'p' }, df: { q: 'q' }, n: null, tu: [{ y: 'y' }], lz: { z: 'z' } };
    expect(found(schema, fits)).toEqual([]);
    expect(
      found(schema, {
        ...fits,
        extra: 1,
        b: { c: 1, c2: 2 },
        d: [{ e: 'e' }, { e: 'e', f: 1 }],
        r: { k: { w: 'w', v: 1 } },
        t: { p: 'p', p2: 1 },
        df: { q: 'q', q2: 1 },
        n: { x: 'x', x2: 1 },
        tu: [{ y: 'y', y2: 1 }],
        lz: { z: 'z', z2: 1 },
      }),
    ).toEqual(['b.c2', 'd.1.f', 'r.k.v', 't.p2', 'df.q2', 'n.x2', 'tu.0.y2', 'lz.z2', 'extra']);
  });

  it('takes what the schema says it takes: z.looseObject, .passthrough(), a catchall (checked itself)', () => {
    expect(found(z.looseObject({ a: z.string() }), { a: 'x', b: 1 })).toEqual([]);
    expect(found(z.object({ a: z.string() }).passthrough(), { a: 'x', b: 1 })).toEqual([]);
    expect(found(z.object({ a: z.string() }).catchall(z.object({ n: z.number() })), { a: 'x', b: { n: 1, m: 2 } })).toEqual(['b.m']);
  });

  it('in a union, a field counts as unknown only when no branch that takes the value names it', () => {
    const union = z.union([z.object({ kind: z.literal('a'), x: z.string() }), z.object({ kind: z.literal('a'), x: z.string(), y: z.string() })]);
    expect(found(union, { kind: 'a', x: '1', y: '2' })).toEqual([]);
    expect(found(union, { kind: 'a', x: '1', y: '2', w: 3 })).toEqual(['w']);
    const tagged = z.discriminatedUnion('kind', [z.object({ kind: z.literal('a'), x: z.string() }), z.object({ kind: z.literal('b'), y: z.string() })]);
    expect(found(tagged, { kind: 'b', y: '1', x: 'from a' })).toEqual(['x']);
  });

  it('is what parseRunInput refuses, with the path of each field, as zod names a strict object\'s', () => {
    const agent = { name: 'booking', version: '1', input: z.object({ trip: z.object({ to: z.string() }) }) };
    expect(parseRunInput(agent, { trip: { to: 'OSL' } })).toEqual({ trip: { to: 'OSL' } });
    const refused = (() => {
      try {
        parseRunInput(agent, { trip: { to: 'OSL', ton: 'BER' } });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).issues).toEqual([{ path: 'input.trip.ton', message: expect.stringMatching(/^unknown field/) }]);
    // z.strictObject refuses in zod itself, under the same path.
    const strict = { ...agent, input: z.strictObject({ trip: z.strictObject({ to: z.string() }) }) };
    expect(() => parseRunInput(strict, { trip: { to: 'OSL', ton: 'BER' } })).toThrow(ValidationError);
  });
});
