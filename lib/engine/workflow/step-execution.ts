import { errorCode, errorMessage, StaleLeaseError, StopWorkError, ToolOutcomeUnknownError } from '../../core/errors.js';
import type { Policy } from '../../core/events.js';
import { jsonShapeProblem, type JsonValue } from '../../core/json.js';
import { opCallId } from '../../core/workflow-events.js';
import { retryDelayMs } from '../../core/workflow-decide.js';
import { NonRetryableError } from '../../core/workflow-errors.js';
import type { StepOptions } from '../../authoring/workflow-types.js';
import { rethrowHalt } from '../checkpoints.js';
import { openBoundedCall } from '../bounded-call.js';
import { DEFAULT_TOOL_TIMEOUT_MS, MAX_JSON_DEPTH, MAX_TOOL_TIMEOUT_MS } from '../../core/limits.js';
import type { RunSession } from '../run-session.js';
import { toolContext } from '../tool-runner.js';
import type { Driver } from './driver-port.js';
import type { OpRequest } from './op-specs.js';
import { insideStep } from './workflow-context.js';

/** How long a function that ignores its abort may keep running before the process must exit. */
const ABORT_GRACE_MS = 2_000;

type StepSpec = Extract<OpRequest['spec'], { kind: 'step' }>;

/** A step's timeout: its own, within what a worker can run. */
export function stepTimeoutMs(options: StepOptions<unknown>): number {
  const ms = options.timeoutSeconds === undefined ? DEFAULT_TOOL_TIMEOUT_MS : Math.round(options.timeoutSeconds * 1000);
  return Math.min(Math.max(ms, 1), MAX_TOOL_TIMEOUT_MS);
}

/** Retry options with their defaults: a read or a keyed write is retried, a write that cannot be repeated blindly is not. */
export function stepRetry(options: StepOptions<unknown>, policy: Policy) {
  const r = options.retry ?? {};
  return {
    maxAttempts: Math.max(1, Math.floor(r.maxAttempts ?? (policy === 'rerun' || policy === 'idempotency_key' ? 3 : 1))),
    initialIntervalSeconds: r.initialIntervalSeconds ?? 1,
    backoffCoefficient: r.backoffCoefficient ?? 2,
    maxIntervalSeconds: r.maxIntervalSeconds ?? 60,
  };
}

/**
 * Start attempt `attempt` of a step: the started marker first (a `rerun` step writes none), then
 * its function, beside the pump. Throws StopWorkError when the lease or the invocation has too
 * little time left for the step's timeout: nothing was written, the next step starts it.
 */
export async function startStep(driver: Driver, request: OpRequest, attempt: number): Promise<void> {
  const { session } = driver;
  const spec = request.spec as StepSpec;
  const logged = driver.opAt(request.op);
  // The policy a step started under is the one it keeps (pinned by its marker).
  const policy: Policy = logged?.policy ?? spec.options.policy ?? 'escalate';
  const timeoutMs = stepTimeoutMs(spec.options);
  session.lease.assertFresh(timeoutMs, session.deadlineAt);
  const notAfter = session.deps.clock.now() + timeoutMs;
  if (policy !== 'rerun') {
    await session.append({ type: 'op_started', op: request.op, kind: 'step', name: request.name, attempt, notAfter, policy });
  }
  request.phase = 'running';
  driver.track(() => runAttempt(driver, request, { attempt, notAfter, policy, timeoutMs }));
}

type Attempt = { attempt: number; notAfter: number; policy: Policy; timeoutMs: number };
type Outcome = { ok: true; value: unknown } | { ok: false; why: 'timeout' | 'cancel' | 'lease_lost' | 'unknown' } | { ok: false; why: 'error'; error: unknown };

/** Run the function and record what happened: a result, a retry, or nothing (an unknown outcome, left to the policy). */
async function runAttempt(driver: Driver, request: OpRequest, a: Attempt): Promise<void> {
  const { session } = driver;
  const { deps } = session;
  const spec = request.spec as StepSpec;
  const label = `${request.name}#${opCallId(request.op)}`;
  await deps.checkpoints?.at('before-step', label);
  const outcome = await bounded(session, a, (signal) => {
    const ctx = toolContext(session, { callId: opCallId(request.op) }, a.attempt, signal, a.notAfter);
    return insideStep.run(request.name, () => spec.fn(ctx));
  });
  await deps.checkpoints?.at('after-step', label);
  if (session.lease.lost || session.fenced) return; // the run is someone else's now: record nothing
  const base = { op: request.op, kind: 'step' as const, name: request.name };
  if (outcome.ok) {
    const problem = notJson(outcome.value);
    if (problem) {
      await session.append({
        ...base,
        type: 'op_result',
        ok: false,
        attempt: a.attempt,
        source: 'step',
        errorCode: 'step_result_not_json',
        output: errorBody('step_result_not_json', problem),
      });
      return;
    }
    const isVoid = outcome.value === undefined;
    await session.append({
      ...base,
      type: 'op_result',
      ok: true,
      attempt: a.attempt,
      source: 'step',
      output: { kind: 'inline', value: isVoid ? null : (outcome.value as JsonValue) },
      ...(isVoid ? { void: true as const } : {}),
    });
    return;
  }
  if (outcome.why === 'cancel' && a.policy === 'rerun') {
    await session.append({
      ...base,
      type: 'op_result',
      ok: false,
      attempt: a.attempt,
      source: 'cancel',
      errorCode: 'cancelled',
      output: errorBody('cancelled', 'run cancelled while the step was running'),
    });
    return;
  }
  // A read cut off (timeout, an unknown outcome) is simply a failed attempt: rerunning it is safe.
  const readCutOff = a.policy === 'rerun' && (outcome.why === 'timeout' || outcome.why === 'unknown');
  if (outcome.why !== 'error' && !readCutOff) {
    // Started, no result: its policy decides once notAfter + grace has passed (decideOp).
    request.phase = 'new';
    return;
  }
  const error = outcome.why === 'error' ? outcome.error : undefined;
  const code = error === undefined ? (outcome.why === 'timeout' ? 'step_timeout' : 'step_outcome_unknown') : errorCode(error);
  const message = deps.codec
    .redactText(error === undefined ? `step ${request.name} gave no result within ${a.timeoutMs} ms` : errorMessage(error))
    .slice(0, 2000);
  const retry = stepRetry(spec.options, a.policy);
  if (a.attempt < retry.maxAttempts && retryable(error)) {
    const retryAt = deps.clock.now() + retryDelayMs(a.attempt, retry);
    await session.append({ ...base, type: 'op_retry', attempt: a.attempt, error: { code, message }, retryAt });
    request.phase = 'new';
    return;
  }
  await session.append({ ...base, type: 'op_result', ok: false, attempt: a.attempt, source: 'step', errorCode: code, output: errorBody(code, message) });
}

/** Is a thrown error worth another attempt? A LogbookError says so itself; NonRetryableError never. */
function retryable(error: unknown): boolean {
  if (error === undefined) return true;
  if (error instanceof NonRetryableError) return false;
  const flag = (error as { retryable?: unknown } | null)?.retryable;
  return flag === undefined ? true : flag === true;
}

function errorBody(code: string, message: string) {
  return { kind: 'inline' as const, value: { error: code, message } };
}

/** Why a value cannot be recorded as JSON exactly (a replay must return what the live run returned). */
export function notJson(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const shape = jsonShapeProblem(value, MAX_JSON_DEPTH, 'result');
  if (shape) return `${shape.path}: ${shape.message}`;
  const stack: { v: unknown; path: string }[] = [{ v: value, path: 'result' }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { v, path } = item;
    if (v === null || typeof v === 'string' || typeof v === 'boolean') continue;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return `${path}: ${v} is not a JSON number`;
      continue;
    }
    if (typeof v !== 'object') return `${path}: a ${typeof v} is not JSON`;
    if (Array.isArray(v)) {
      v.forEach((x, i) => stack.push({ v: x, path: `${path}.${i}` }));
      continue;
    }
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null)
      return `${path}: a ${(v as object).constructor?.name ?? 'class instance'} is not plain JSON (return its JSON form)`;
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) continue;
      stack.push({ v: x, path: `${path}.${k}` });
    }
  }
  return undefined;
}

/**
 * Run a step's (or verify's) function as one bounded call (bounded-call.ts): its timeout, the
 * lease and, for `rerun` and `idempotency_key` steps, the run's cancel; a function that ignores
 * its abort and is still running after a grace marks the session dangling (the process exits).
 */
export async function bounded(session: RunSession, a: Pick<Attempt, 'policy' | 'timeoutMs'>, fn: (signal: AbortSignal) => unknown): Promise<Outcome> {
  const cancellable = a.policy === 'rerun' || a.policy === 'idempotency_key';
  const call = openBoundedCall({
    clock: session.deps.clock,
    timeoutMs: a.timeoutMs,
    lease: session.lease.signal,
    ...(cancellable ? { cancel: session.cancel.signal } : {}),
    grace: { ms: ABORT_GRACE_MS, onDangling: () => (session.dangling = true) },
  });
  try {
    if (session.lease.lost || session.fenced) return { ok: false, why: 'lease_lost' };
    session.lease.assertFresh(0, Number.MAX_SAFE_INTEGER);
    let work: Promise<unknown>;
    try {
      work = Promise.resolve(fn(call.signal));
    } catch (error) {
      work = Promise.reject(error);
    }
    return { ok: true, value: await call.settle(work) };
  } catch (error) {
    rethrowHalt(error);
    if (call.why) return { ok: false, why: call.why };
    if (error instanceof StaleLeaseError || error instanceof StopWorkError) return { ok: false, why: 'lease_lost' };
    if (session.fenced || session.lease.staleness() !== undefined) return { ok: false, why: 'lease_lost' };
    if (error instanceof ToolOutcomeUnknownError) return { ok: false, why: 'unknown' };
    return { ok: false, why: 'error', error };
  } finally {
    call.close();
  }
}
