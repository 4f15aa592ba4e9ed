import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StepQueue, Tick } from '../../lib/ports/step-queue.js';
import { newRun } from './fixtures.js';

export interface DeliveredTick {
  tick: Tick;
  dedupeId: string;
}

export interface StepQueueUnderTest {
  queue: StepQueue;
  /** Receive and acknowledge everything deliverable now, in delivery order. */
  drain(): Promise<DeliveredTick[]>;
  dispose(): Promise<void>;
}

export interface StepQueueTarget {
  name: string;
  available: boolean;
  setup(): Promise<StepQueueUnderTest>;
}

export function stepQueueContract(target: StepQueueTarget): void {
  describe.runIf(target.available)(`StepQueue contract: ${target.name}`, () => {
    let sut: StepQueueUnderTest;
    beforeAll(async () => {
      sut = await target.setup();
    });
    afterAll(async () => {
      await sut?.dispose();
    });

    it('drops a repeated dedupe id but never a wake-up whose id names another sender or seq', async () => {
      const run = newRun();
      const tick = { tenant: run.tenant, runId: run.runId };
      const ids = [
        `${run.runId}:5:2`, // worker after appending seq 5 under epoch 2
        `${run.runId}:5:2`, // the same send retried: swallowed
        `${run.runId}:inbox:01HZX`, // API after an inbox put
        `${run.runId}:sweep:2:0`, // sweeper
        `${run.runId}:sweep:2:0`, // the same sweep retried
        `${run.runId}:sweep:2:1`, // the next sweep
        `${run.runId}:6:3`, // the next worker
      ];
      for (const dedupeId of ids) await sut.queue.enqueue(tick, { dedupeId });
      const delivered = await sut.drain();
      expect(delivered.map((d) => d.tick)).toEqual(Array.from({ length: 5 }, () => tick));
      expect(delivered.map((d) => d.dedupeId)).toEqual([...new Set(ids)]);
    });

    it('delivers ticks of different runs independently, each run in order', async () => {
      const a = newRun('a');
      const b = newRun('b');
      await sut.queue.enqueue(a, { dedupeId: `${a.runId}:1:1` });
      await sut.queue.enqueue(b, { dedupeId: `${b.runId}:1:1` });
      await sut.queue.enqueue(a, { dedupeId: `${a.runId}:2:1` });
      const delivered = await sut.drain();
      expect(delivered.map((d) => d.tick)).toHaveLength(3);
      expect(delivered.filter((d) => d.tick.runId === a.runId).map((d) => d.dedupeId)).toEqual([`${a.runId}:1:1`, `${a.runId}:2:1`]);
      expect(delivered.map((d) => d.tick)).toContainEqual({ tenant: b.tenant, runId: b.runId });
    });

    it('delivers a tick\'s load hint with it (a snapshot pointer, or none yet), and no hint where none was sent', async () => {
      const run = newRun('h');
      const snapshot = { seq: 50, key: `snapshots/${run.tenant}/${run.runId}/0000000050-abc.json`, sha256: 'c'.repeat(64), foldVersion: 3 };
      await sut.queue.enqueue({ ...run, hint: { snapshot } }, { dedupeId: `${run.runId}:51:2` });
      await sut.queue.enqueue({ ...run, hint: { snapshot: null } }, { dedupeId: `${run.runId}:1:0` });
      await sut.queue.enqueue(run, { dedupeId: `${run.runId}:inbox:x` });
      const delivered = await sut.drain();
      expect(delivered.map((d) => d.tick)).toEqual([
        { tenant: run.tenant, runId: run.runId, hint: { snapshot } },
        { tenant: run.tenant, runId: run.runId, hint: { snapshot: null } },
        { tenant: run.tenant, runId: run.runId },
      ]);
    });
  });
}
