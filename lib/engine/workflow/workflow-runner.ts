import { opCallId } from '../../core/workflow-events.js';
import { decideOp } from '../../core/workflow-decide.js';
import type { OpState } from '../../core/workflow-state.js';
import { MAX_CRASHED_TOOL_ATTEMPTS } from '../../core/limits.js';
import type { RunSession } from '../run-session.js';
import type { TurnOutcome } from '../turn-outcome.js';
import { cancelChildRun } from './op-children.js';
import { WorkflowDriver } from './replay-driver.js';

/** The driver of each session's workflow: kept across the rounds of one step, dropped with it. */
const drivers = new WeakMap<RunSession, WorkflowDriver>();

/**
 * One turn of a workflow run: the run-level rules first (as decide()'s first rules for an agent),
 * then the replay driver. In order:
 * 1. the run has an outcome → ended;
 * 2. an operator failed it → run_failed (failed_by_operator);
 * 3. a cancel is recorded → the cancel path (no code runs): children are told to stop, rerun and
 *    idempotency_key steps are abandoned, verify and escalate steps get until notAfter + grace,
 *    then run_cancelled with the operations left unresolved;
 * 4. a run-level attention is open (non-determinism, a missing version) → parked;
 * 5. the pinned version is not registered here → attention missing_workflow_version;
 * 6. otherwise the driver: the code from the top over the log, then live (replay-driver.ts).
 */
export async function runWorkflowTurn(session: RunSession): Promise<TurnOutcome> {
  const { state, deps } = session;
  if (state.outcome) return { kind: 'ended' };
  if (state.failRequested) {
    await session.append({ type: 'run_failed', code: 'failed_by_operator', message: `failed by ${state.failRequested.by}` });
    return { kind: 'ended' };
  }
  if (state.cancel) return cancelWorkflow(session);
  const runLevel = state.attention.filter((a) => a.callId === undefined);
  if (runLevel.length > 0) return { kind: 'parked', reasons: runLevel.map((a) => `${a.reason}: ${a.detail}`) };
  const { name, version } = state.started.agent;
  const definition = deps.registry.workflow(name, version);
  if (!definition) {
    const detail = `no code registered for workflow ${name}@${version}, which this run pinned: register that version (defineAgents' workflows) and retry`;
    await session.append({ type: 'attention_required', reason: 'missing_workflow_version', detail });
    return { kind: 'parked', reasons: [detail] };
  }
  let driver = drivers.get(session);
  // A driver that stopped (a park, a time slice) is not resumed: the next turn replays afresh.
  if (!driver || driver.closed) {
    driver = new WorkflowDriver(session, definition);
    drivers.set(session, driver);
    driver.start(await deps.codec.resolve(state.started.input));
  }
  return driver.pump();
}

/** A recorded cancel: wind the operations down by their rules, then record run_cancelled. */
async function cancelWorkflow(session: RunSession): Promise<TurnOutcome> {
  const { state, deps } = session;
  const unresolved: string[] = [];
  const waits: number[] = [];
  for (const op of state.workflow!.ops) {
    if (!op || op.status === 'done') continue;
    const action = decideOp(op, {
      now: deps.clock.now(),
      graceMs: state.started.graceMs,
      cancelling: true,
      attentionOpen: state.attention.some((a) => a.callId === opCallId(op.op)),
      maxToolAttempts: deps.config.maxToolAttempts,
      maxCrashedToolAttempts: deps.config.maxCrashedToolAttempts ?? MAX_CRASHED_TOOL_ATTEMPTS,
    });
    if (action.kind === 'wait' && action.until !== undefined) waits.push(action.until);
    else if (action.kind === 'abandon' && action.unresolved) unresolved.push(opCallId(op.op));
  }
  if (waits.length > 0) return { kind: 'waiting', until: Math.min(...waits), reason: 'cancel waits for verify/escalate steps to time out' };
  // Cancel cascades: every open child is asked to stop before the parent records its cancel.
  for (const runId of openChildren(state.workflow!.ops)) await cancelChildRun(session, runId, `parent run ${session.run.runId} was cancelled`);
  await session.append({ type: 'run_cancelled', unresolved });
  return { kind: 'ended' };
}

function openChildren(ops: readonly (OpState | null)[]): string[] {
  return ops.flatMap((o) => (o?.status === 'started' && o.wait?.kind === 'child' ? [o.wait.runId] : []));
}
