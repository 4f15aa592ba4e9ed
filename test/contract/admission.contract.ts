import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Admission } from '../../lib/ports/admission.js';
import { newRun } from './fixtures.js';

export interface AdmissionTarget {
  name: string;
  available: boolean;
  setup(): Promise<{ admission: Admission; dispose(): Promise<void> }>;
}

/** Per-tenant admission: a bounded set of run ids, idempotent both ways, per tenant. */
export function admissionContract(target: AdmissionTarget): void {
  describe.runIf(target.available)(`Admission contract: ${target.name}`, () => {
    let sut: { admission: Admission; dispose(): Promise<void> };
    beforeAll(async () => {
      sut = await target.setup();
    });
    afterAll(async () => {
      await sut?.dispose();
    });

    it('admits up to the limit, refuses beyond it, and admits again once a slot is released', async () => {
      const { tenant } = newRun();
      const run = (id: string) => ({ tenant, runId: id });
      expect(await sut.admission.admit(run('a'), 2)).toBe(true);
      expect(await sut.admission.admit(run('b'), 2)).toBe(true);
      expect(await sut.admission.admit(run('c'), 2)).toBe(false);
      expect(await sut.admission.holders(tenant)).toEqual(['a', 'b']);
      // A run that holds a slot is admitted again (a retried start), even at the limit.
      expect(await sut.admission.admit(run('b'), 2)).toBe(true);
      expect(await sut.admission.holders(tenant)).toEqual(['a', 'b']);
      await sut.admission.release(run('a'));
      await sut.admission.release(run('a')); // idempotent: frees one slot, once
      expect(await sut.admission.holders(tenant)).toEqual(['b']);
      expect(await sut.admission.admit(run('c'), 2)).toBe(true);
      expect(await sut.admission.admit(run('d'), 2)).toBe(false);
      expect(await sut.admission.holders(tenant)).toEqual(['b', 'c']);
    });

    it('keeps tenants apart, and releasing a run of a tenant with no set is a no-op', async () => {
      const one = newRun().tenant;
      const two = newRun().tenant;
      expect(await sut.admission.admit({ tenant: one, runId: 'x' }, 1)).toBe(true);
      expect(await sut.admission.admit({ tenant: two, runId: 'x' }, 1)).toBe(true);
      expect(await sut.admission.admit({ tenant: one, runId: 'y' }, 1)).toBe(false);
      await sut.admission.release({ tenant: newRun().tenant, runId: 'x' });
      expect(await sut.admission.holders(one)).toEqual(['x']);
      expect(await sut.admission.holders(two)).toEqual(['x']);
    });

    it('never admits more than the limit when starts race', async () => {
      const { tenant } = newRun();
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => sut.admission.admit({ tenant, runId: `r${i}` }, 5)));
      expect(results.filter(Boolean)).toHaveLength(5);
      expect(await sut.admission.holders(tenant)).toHaveLength(5);
    });
  });
}
