// The inspector's in-page JSON Schema check (dev/ui/client/json-schema.ts) agrees with zod, the
// API's own check, on the schemas zod writes into a run's pins: for each value, it fits in the page
// exactly when zod accepts it, and each refusal names the same field zod names. And the form
// fields the page builds from a signal's payload schema.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkSchema, formFields, type JsonSchema } from '../../../dev/ui/client/json-schema.js';

const refund = z.object({ orderId: z.string().min(1), amountCents: z.number().int().positive().max(100_000) }).strict();
const parcel = z
  .object({
    trackingId: z.string().min(3).regex(/^T/),
    condition: z.enum(['damaged', 'intact']),
    weightKg: z.number().min(0).optional(),
    insured: z.boolean(),
    note: z.string().max(10).nullable().optional(),
    items: z.array(z.object({ sku: z.string(), qty: z.number().int().min(1) })).min(1),
  })
  .strict();
const either = z.union([z.object({ a: z.string() }).strict(), z.object({ b: z.number() }).strict()]);

const cases: [string, z.ZodType, unknown[]][] = [
  [
    'refund',
    refund,
    [
      { orderId: 'o', amountCents: 5 },
      { orderId: '', amountCents: 5 },
      { orderId: 'o', amountCents: 0 },
      { orderId: 'o', amountCents: 1.5 },
      { orderId: 'o', amountCents: 100_001 },
      { orderId: 'o', amountCents: '5' },
      { orderId: 'o' },
      { orderId: 'o', amountCents: 5, extra: 1 },
      [],
      null,
      'x',
    ],
  ],
  [
    'parcel',
    parcel,
    [
      { trackingId: 'T-1', condition: 'damaged', insured: true, items: [{ sku: 'a', qty: 1 }] },
      { trackingId: 'T-1', condition: 'damaged', insured: true, items: [{ sku: 'a', qty: 1 }], weightKg: 2.5, note: null },
      { trackingId: 'T-1', condition: 'broken', insured: true, items: [{ sku: 'a', qty: 1 }] },
      { trackingId: 'X-1', condition: 'intact', insured: false, items: [{ sku: 'a', qty: 1 }] },
      { trackingId: 'T', condition: 'intact', insured: false, items: [{ sku: 'a', qty: 1 }] },
      { trackingId: 'T-1', condition: 'intact', insured: 'yes', items: [{ sku: 'a', qty: 1 }] },
      { trackingId: 'T-1', condition: 'intact', insured: false, items: [] },
      { trackingId: 'T-1', condition: 'intact', insured: false, items: [{ sku: 'a', qty: 0 }] },
      { trackingId: 'T-1', condition: 'intact', insured: false, items: [{ sku: 'a', qty: 1 }], weightKg: -1 },
      { trackingId: 'T-1', condition: 'intact', insured: false, items: [{ sku: 'a', qty: 1 }], note: 'far too long a note' },
    ],
  ],
  ['either', either, [{ a: 'x' }, { b: 1 }, { a: 1 }, { c: 1 }, {}]],
];

describe('the in-page schema check', () => {
  for (const [name, schema, values] of cases) {
    it(`accepts exactly what zod accepts: ${name}`, () => {
      const json = z.toJSONSchema(schema, { target: 'draft-2020-12' }) as JsonSchema;
      for (const value of values) {
        const zod = schema.safeParse(value);
        const page = checkSchema(json, value);
        expect(page.length === 0, `${JSON.stringify(value)}: zod ${zod.success ? 'ok' : zod.error.message}; page ${JSON.stringify(page)}`).toBe(zod.success);
        if (!zod.success && name !== 'either') {
          // The fields zod names are among the fields the page names.
          const zodPaths = new Set(zod.error.issues.map((i) => i.path.join('.')));
          const pagePaths = new Set(page.map((i) => i.path));
          for (const p of zodPaths) if (p !== '') expect([...pagePaths], `${JSON.stringify(value)}`).toContain(p);
        }
      }
    });
  }

  it('names the bad field of an edit as the API does (amountCents as text)', () => {
    const json = z.toJSONSchema(refund, { target: 'draft-2020-12' }) as JsonSchema;
    expect(checkSchema(json, { orderId: 'o_eb70', amountCents: 'ten dollars' })).toEqual([{ path: 'amountCents', message: 'expected integer, got string' }]);
  });

  it('builds a form from a payload schema: text, choice, number, checkbox, JSON for the rest', () => {
    const json = z.toJSONSchema(parcel, { target: 'draft-2020-12' }) as JsonSchema;
    expect(formFields(json)?.map((f) => [f.name, f.field.kind, f.required])).toEqual([
      ['trackingId', 'string', true],
      ['condition', 'enum', true],
      ['weightKg', 'number', false],
      ['insured', 'boolean', true],
      ['note', 'json', false],
      ['items', 'json', true],
    ]);
    expect(formFields(z.toJSONSchema(z.string()) as JsonSchema)).toBeUndefined();
  });
});
