import { WorkerHalt, type Checkpoints } from '../../../lib/engine/checkpoints.js';
import { foldLog } from '../../../lib/core/fold.js';
import type { World } from '../../../lib/testing/world.js';
import type { RunRef } from '../../../lib/core/run-ref.js';

/** Checkpoints that halt the worker the first time a label starting with `prefix` is passed. */
export function haltAt(prefix: string): Checkpoints & { fired: boolean } {
  const cp = {
    fired: false,
    at(point: string, detail: string) {
      if (cp.fired) throw new WorkerHalt('after crash');
      if (`${point}:${detail}`.startsWith(prefix)) {
        cp.fired = true;
        throw new WorkerHalt(`${point}:${detail}`);
      }
    },
  };
  return cp;
}

export async function logOf(world: World, run: RunRef) {
  const events = (await world.storage.log.read(run, { afterSeq: 0 })).events as ({ type: string; seq: number } & Record<string, unknown>)[];
  return { events, types: events.map((e) => e.type), state: foldLog(events) };
}
