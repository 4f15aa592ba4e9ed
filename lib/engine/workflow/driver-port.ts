import type { OpState } from '../../core/workflow-state.js';
import type { WorkflowDefinition } from '../../authoring/workflow-types.js';
import type { RunSession } from '../run-session.js';
import type { TurnOutcome } from '../turn-outcome.js';

/**
 * Why the driver stopped before the code did: what the step does next, an error to end it with,
 * or a failure of the run to record once nothing of this worker's runs any more.
 */
export type Halt = { kind: 'outcome'; outcome: TurnOutcome } | { kind: 'error'; error: unknown } | { kind: 'fail'; code: string; message: string };

/** What acting on operations needs from the replay driver (replay-driver.ts implements it). */
export interface Driver {
  readonly session: RunSession;
  readonly definition: WorkflowDefinition;
  /** The operation as the log holds it now (undefined: no event of it yet). */
  opAt(op: number): OpState | undefined;
  /** Run work of this worker's (a step's function, a short wait) beside the pump. */
  track(work: () => Promise<void>): void;
  stop(halt: Halt): void;
}
