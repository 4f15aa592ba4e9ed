// Compile-time claims, checked by `tsc --noEmit` over the tests (a broken claim fails the typecheck:
// an unused @ts-expect-error is an error too); the runtime part checks the values are recorded as JSON.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import type { ToolContext } from '../../../lib/authoring/types.js';

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
});
