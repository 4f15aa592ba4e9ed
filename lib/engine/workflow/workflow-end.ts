import { errorMessage, LogbookError } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import { zodIssuesText } from '../../core/zod-issues.js';
import type { OpKind } from '../../core/workflow-events.js';
import type { OpState } from '../../core/workflow-state.js';
import type { TurnOutcome } from '../turn-outcome.js';
import type { Driver } from './driver-port.js';
import type { OpRequest } from './op-specs.js';
import { cancelChildRun } from './op-children.js';
import { notJson } from './step-execution.js';

/**
 * How a workflow run ends: the code returned (its output checked, then run_completed), threw
 * (run_failed with what it threw, never a crash loop), asked for something its log does not hold
 * (parked as workflow_nondeterministic: nothing is acted on to find out), or waits for something
 * that is not an operation (failed: it could never be woken).
 */

/** An operation as messages name it: step "load", sleep, child "triage". */
export const describeOp = (op: { kind: OpKind; name: string }) =>
  op.kind === 'step' || op.kind === 'child' || op.kind === 'signal' || op.kind === 'approval' ? `${op.kind} "${op.name}"` : op.kind;

export async function finishWorkflow(
  driver: Driver,
  settled: { ok: true; value: unknown } | { ok: false; error: unknown },
  nextOp: number,
  undelivered: OpRequest[],
): Promise<TurnOutcome> {
  const { session, definition } = driver;
  const ops = session.state.workflow!.ops;
  // The log holds operations past the last one this code asked for: the code changed under the run.
  const unasked = ops.slice(nextOp - 1).find((o): o is OpState => o !== null);
  if (unasked) return nondeterministic(driver, { op: unasked.op, unasked });
  // Children it started and did not wait for are stopped: nothing of the run outlives it.
  for (const request of undelivered) {
    const op = driver.opAt(request.op);
    if (op?.status === 'started' && op.wait?.kind === 'child') await cancelChildRun(session, op.wait.runId, 'the parent workflow ended without waiting for it');
  }
  if (!settled.ok) {
    const error = settled.error;
    const code = error instanceof LogbookError ? error.code : 'workflow_failed';
    const name = error instanceof Error && error.name !== 'Error' ? `${error.name}: ` : '';
    await session.append({ type: 'run_failed', code, message: `${definition.name} threw ${name}${errorMessage(error)}`.slice(0, 2000) });
    return { kind: 'ended' };
  }
  let value = settled.value;
  if (definition.output) {
    const parsed = definition.output.safeParse(value);
    if (!parsed.success) {
      await session.append({
        type: 'run_failed',
        code: 'output_invalid',
        message: `${definition.name} returned an output its schema refuses: ${zodIssuesText(parsed.error)}`,
      });
      return { kind: 'ended' };
    }
    value = parsed.data;
  }
  const problem = notJson(value);
  if (problem) {
    await session.append({ type: 'run_failed', code: 'output_not_json', message: `${definition.name} returned what JSON cannot hold: ${problem}` });
    return { kind: 'ended' };
  }
  const output = (value === undefined ? null : value) as JsonValue;
  const answer = typeof output === 'string' ? output : JSON.stringify(output);
  await session.append({ type: 'run_completed', answer: { kind: 'inline', value: answer }, output: { kind: 'inline', value: output } });
  return { kind: 'ended' };
}

/** Park for a person: the code no longer matches its log. Raised once; `retry` runs the code again, `fail` ends the run. */
export async function nondeterministic(
  driver: Driver,
  found: { op: number; logged?: OpState; asked?: { kind: OpKind; name: string }; unasked?: OpState },
): Promise<TurnOutcome> {
  const { session } = driver;
  const pinned = `${session.state.started.agent.name}@${session.state.started.agent.version}`;
  const what = found.asked
    ? `the code asked for ${describeOp(found.asked)} where the log holds ${describeOp(found.logged!)}`
    : `the log holds ${describeOp(found.unasked!)}, which the code did not ask for${found.unasked!.status === 'done' ? ' before its result came' : ''}`;
  const detail = `operation ${found.op}: ${what} (workflow ${pinned}, pinned when the run started): the code changed under a running workflow; deploy the code of ${pinned}, or answer fail`;
  const open = session.state.attention.some((a) => a.reason === 'workflow_nondeterministic' && a.callId === undefined);
  if (!open) await session.append({ type: 'attention_required', reason: 'workflow_nondeterministic', detail });
  return { kind: 'parked', reasons: [detail] };
}

/** The code neither settled nor asked for anything within the grace: nothing could ever wake it. */
export async function awaitsOutside(driver: Driver, graceMs: number): Promise<TurnOutcome> {
  const { session, definition } = driver;
  await session.append({
    type: 'run_failed',
    code: 'workflow_awaits_outside',
    message: `${definition.name} waited ${graceMs} ms for something that is not a ctx operation (a timer, I/O or a promise of its own); do such work inside ctx.step`,
  });
  return { kind: 'ended' };
}
