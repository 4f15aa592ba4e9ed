// Compile-time claims, checked by `tsc --noEmit` over the tests (a broken claim fails the typecheck:
// an unused @ts-expect-error is an error too); the runtime part checks the values are recorded as JSON.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import type { ToolContext, VerifyOutcome } from '../../../lib/authoring/types.js';
import type { JsonValue } from '../../../lib/core/json.js';

interface Booking {
  id: string;
  nights: number;
  guest?: { name: string };
  tags: string[];
}

const ctx = {} as ToolContext;

describe('defineTool result types', () => {
  it('an execute returning an object of an interface type compiles and runs', async () => {
    const book = defineTool({
      name: 'book',
      version: '1',
      description: 'book',
      input: z.object({ nights: z.number() }),
      policy: 'rerun',
      execute: async ({ nights }): Promise<Booking> => ({ id: 'b1', nights, tags: ['web'] }),
    });
    expect(await book.execute({ nights: 2 }, ctx)).toEqual({ id: 'b1', nights: 2, tags: ['web'] });
  });

  it('values JSON would change are refused by the compiler', () => {
    const withDate = () =>
      defineTool({
        name: 'when',
        version: '1',
        description: 'when',
        input: z.object({}),
        // @ts-expect-error a Date is not JSON-compatible (JSON.stringify turns it into a string)
        execute: async () => ({ at: new Date() }),
      });
    const withMap = () =>
      defineTool({
        name: 'map',
        version: '1',
        description: 'map',
        input: z.object({}),
        // @ts-expect-error a Map is not JSON-compatible (JSON.stringify turns it into {})
        execute: async () => (Math.random() > 2 ? { ok: true } : new Map<string, string>()),
      });
    expect(typeof withDate).toBe('function');
    expect(typeof withMap).toBe('function');
  });

  it("verify()'s landed output takes the same JSON-compatible types: an interface, another shape than execute's, JsonValue", async () => {
    const bookings = new Map<string, Booking>([['k', { id: 'b1', nights: 2, tags: [] }]]);
    const book = defineTool({
      name: 'book',
      version: '1',
      description: 'book',
      input: z.object({ nights: z.number() }),
      policy: 'verify',
      execute: async ({ nights }): Promise<Booking> => ({ id: 'b1', nights, tags: [] }),
      async verify(_args, c) {
        const found = bookings.get(c.idempotencyKey);
        return found ? { status: 'landed', output: found } : { status: 'not_landed' };
      },
    });
    expect(await book.verify!({ nights: 2 }, { ...ctx, idempotencyKey: 'k' })).toEqual({ status: 'landed', output: { id: 'b1', nights: 2, tags: [] } });
    expect(await book.verify!({ nights: 2 }, { ...ctx, idempotencyKey: 'other' })).toEqual({ status: 'not_landed' });
    const other = defineTool({
      name: 'other',
      version: '1',
      description: 'other',
      input: z.object({}),
      policy: 'verify',
      execute: async (): Promise<Booking> => ({ id: 'b2', nights: 1, tags: [] }),
      verify: async () => ({ status: 'landed' as const, output: { verified: true, at: '2026-01-01' } }),
    });
    const typed = defineTool({
      name: 'typed',
      version: '1',
      description: 'typed',
      input: z.object({}),
      policy: 'verify',
      execute: async () => 1,
      verify: async (): Promise<VerifyOutcome<JsonValue>> => ({ status: 'unknown' }),
    });
    expect(await other.verify!({}, ctx)).toEqual({ status: 'landed', output: { verified: true, at: '2026-01-01' } });
    expect(await typed.verify!({}, ctx)).toEqual({ status: 'unknown' });
  });

  it("a landed output JSON would change is refused by the compiler", () => {
    const withDate = () =>
      defineTool({
        name: 'when',
        version: '1',
        description: 'when',
        input: z.object({}),
        policy: 'verify',
        execute: async () => ({ ok: true }),
        // @ts-expect-error a Date is not JSON-compatible, in verify() as in execute()
        verify: async () => ({ status: 'landed' as const, output: { at: new Date() } }),
      });
    expect(typeof withDate).toBe('function');
  });
});
