import type { StartRunRequest } from '../engine/start-run.js';
import type { Outside, Resolver } from './driver.js';
import type { SideEffectRecord } from './side-effects.js';
import type { World } from './world.js';

/** A scripted agent and the world it runs in, built fresh for every point. */
export interface HarnessScenario<W extends World = World, E = SideEffectRecord> {
  name: string;
  /** A fresh world (storage, clock, registry, models) and the fake services its tools call. */
  world(): W;
  request: StartRunRequest;
  /** Every side effect the world's services performed so far, in order (effectLog().all()). */
  sideEffects(world: W): readonly E[];
  /**
   * The identity of an effect that must happen at most once, or undefined for one that may repeat
   * (reads, writes the service deduplicated). Default: `op:key` of a SideEffectRecord that was
   * applied and is not read-only.
   */
  onceKey?: (effect: E) => string | undefined;
  /**
   * The scripted person who answers parks (resolveFromEffects(log) for tools writing to an
   * effectLog()). Without one, a point whose run parks for a person fails, naming the park.
   */
  resolver?: (world: W) => Resolver;
  /**
   * The scripted outside world for runs that wait on it: approvals, signals, follow-up messages.
   * Its requests pass the inbox checkpoints, so the harness crashes there too.
   */
  outside?: (world: W) => Outside;
}

export interface PointReport {
  /**
   * `pause`: a worker frozen at a checkpoint past its lease; `late-call`: frozen inside a tool
   * call, woken after the takeover with its old fencing token and deadline (late-calls.ts).
   */
  kind: 'crash' | 'double-crash' | 'pause' | 'late-call';
  /** Checkpoint indexes (in the order the uninterrupted run passes them) and their labels. */
  at: { index: number; label: string }[];
  held: boolean;
  failures: string[];
  /** The run's status at the end, or `unfinished` when the driver gave up on it. */
  finalStatus: string;
  crashes: number;
  resolutions: number;
}
