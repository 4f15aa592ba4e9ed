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
      expect(await sut.admission.admit(run('a'), 2)).toBe('taken');
      expect(await sut.admission.admit(run('b'), 2)).toBe('taken');
      expect(await sut.admission.admit(run('c'), 2)).toBe('refused');
      expect(await sut.admission.holders(tenant)).toEqual(['a', 'b']);
      // A run that holds a slot is admitted again (a retried start), even at the limit: `held`.
      expect(await sut.admission.admit(run('b'), 2)).toBe('held');
      expect(await sut.admission.holders(tenant)).toEqual(['a', 'b']);
      await sut.admission.release(run('a'));
      await sut.admission.release(run('a')); // idempotent: frees one slot, once
      expect(await sut.admission.holders(tenant)).toEqual(['b']);
      expect(await sut.admission.admit(run('c'), 2)).toBe('taken');
      expect(await sut.admission.admit(run('d'), 2)).toBe('refused');
      expect(await sut.admission.holders(tenant)).toEqual(['b', 'c']);
    });

    it('keeps tenants apart, and releasing a run of a tenant with no set is a no-op', async () => {
      const one = newRun().tenant;
      const two = newRun().tenant;
      expect(await sut.admission.admit({ tenant: one, runId: 'x' }, 1)).toBe('taken');
      expect(await sut.admission.admit({ tenant: two, runId: 'x' }, 1)).toBe('taken');
      expect(await sut.admission.admit({ tenant: one, runId: 'y' }, 1)).toBe('refused');
      await sut.admission.release({ tenant: newRun().tenant, runId: 'x' });
      expect(await sut.admission.holders(one)).toEqual(['x']);
      expect(await sut.admission.holders(two)).toEqual(['x']);
    });

    it('never admits more than the limit when starts race', async () => {
      const { tenant } = newRun();
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => sut.admission.admit({ tenant, runId: `r${i}` }, 5)));
      expect(results.filter((r) => r === 'taken')).toHaveLength(5);
      expect(results.filter((r) => r === 'refused')).toHaveLength(7);
      expect(await sut.admission.holders(tenant)).toHaveLength(5);
    });

    it('tells the one caller that took a slot from the others racing for the same run: one `taken`, the rest `held`', async () => {
      const { tenant } = newRun();
      const results = await Promise.all(Array.from({ length: 6 }, () => sut.admission.admit({ tenant, runId: 'same' }, 3)));
      expect(results.filter((r) => r === 'taken')).toHaveLength(1);
      expect(results.filter((r) => r === 'held')).toHaveLength(5);
      expect(await sut.admission.holders(tenant)).toEqual(['same']);
    });

    it('release semantics: a released slot is taken again by the same id, a release frees only its own id and tenant, and a full tenant recovers by releases alone', async () => {
      const { tenant } = newRun();
      const other = newRun().tenant;
      const run = (id: string, t = tenant) => ({ tenant: t, runId: id });
      for (const id of ['a', 'b', 'c']) expect(await sut.admission.admit(run(id), 3)).toBe('taken');
      expect(await sut.admission.admit(run('a', other), 3)).toBe('taken');
      // What a start that failed after admit does: give back exactly the slot it took.
      await sut.admission.release(run('b'));
      expect(await sut.admission.holders(tenant)).toEqual(['a', 'c']);
      expect(await sut.admission.holders(other)).toEqual(['a']);
      // The same id again (the client's retry) takes it again, as a new slot.
      expect(await sut.admission.admit(run('b'), 3)).toBe('taken');
      // Releasing an id that holds nothing changes nothing (a second give-back, a child run's end).
      await sut.admission.release(run('never'));
      expect(await sut.admission.holders(tenant)).toEqual(['a', 'b', 'c']);
      // At the limit, each release lets exactly one new run in: no slot is lost or counted twice.
      expect(await sut.admission.admit(run('d'), 3)).toBe('refused');
      for (const id of ['a', 'b', 'c']) await sut.admission.release(run(id));
      expect(await sut.admission.holders(tenant)).toEqual([]);
      for (const id of ['d', 'e', 'f']) expect(await sut.admission.admit(run(id), 3)).toBe('taken');
      expect(await sut.admission.admit(run('g'), 3)).toBe('refused');
    });

    it('a release racing admits of other runs at the limit frees exactly one slot', async () => {
      const { tenant } = newRun();
      const run = (id: string) => ({ tenant, runId: id });
      for (const id of ['a', 'b']) await sut.admission.admit(run(id), 2);
      const [, ...answers] = await Promise.all([sut.admission.release(run('a')), ...['x', 'y', 'z'].map((id) => sut.admission.admit(run(id), 2))]);
      expect(answers.filter((r) => r === 'taken').length).toBeLessThanOrEqual(1);
      const holders = await sut.admission.holders(tenant);
      expect(holders.length).toBeLessThanOrEqual(2);
      expect(holders).toContain('b');
      expect(holders).not.toContain('a');
    });
  });
}
