import { z } from 'zod';
import { hashJson } from '../../support/hash.js';
import { randomUUID, randomInt } from 'node:crypto';
import type { JsonValue } from '../../core/json.js';
import { opCallId } from '../../core/workflow-events.js';
import { decideOp } from '../../core/workflow-decide.js';
import type { OpState } from '../../core/workflow-state.js';
import { WorkflowUsageError } from '../../core/workflow-errors.js';
import { MAX_CRASHED_TOOL_ATTEMPTS } from '../../core/limits.js';
import type { Driver } from './driver-port.js';
import type { OpRequest } from './op-specs.js';
import { bounded, notJson, startStep, stepTimeoutMs } from './step-execution.js';
import { cancelChildRun, ensureChild, startChildOp } from './op-children.js';
import { toolContext } from '../tool-runner.js';
import { plural } from '../../core/plural.js';

/** 'stop': the driver stopped acting (time, lease, a failure); 'ok': go on with the next operation. */
export type ActResult = 'ok' | 'stop';

/**
 * Act on one operation the code waits for, once every recorded result has been delivered: start a
 * new one, or carry a logged one on by decideOp's rule. Every act is a conditional append first;
 * only then does anything happen (a function runs, a child is created).
 */
export async function actOnOperation(driver: Driver, request: OpRequest, op: OpState | undefined): Promise<ActResult> {
  if (!op) return startOperation(driver, request);
  const { session } = driver;
  const { state, deps } = session;
  const action = decideOp(op, {
    now: deps.clock.now(),
    graceMs: state.started.graceMs,
    cancelling: false,
    attentionOpen: state.attention.some((a) => a.callId === opCallId(op.op)),
    maxToolAttempts: deps.config.maxToolAttempts,
    maxCrashedToolAttempts: deps.config.maxCrashedToolAttempts ?? MAX_CRASHED_TOOL_ATTEMPTS,
  });
  request.blocked = false;
  delete request.until;
  switch (action.kind) {
    case 'deliver':
    case 'abandon':
      request.phase = 'acted';
      return 'ok';
    case 'run':
      await startStep(driver, request, action.attempt);
      return 'ok';
    case 'verify':
      await verifyStep(driver, request, op);
      return 'ok';
    case 'attention':
      await session.append({ type: 'attention_required', reason: action.reason, callId: opCallId(op.op), detail: action.detail });
      request.phase = 'acted';
      request.blocked = true;
      return 'ok';
    case 'blocked':
      request.phase = 'acted';
      request.blocked = true;
      return 'ok';
    case 'wait':
      // A child whose create a crash cut off is created now (the same create: idempotent).
      if (op.wait?.kind === 'child') await ensureChild(driver, op);
      waitFor(driver, request, action.until);
      return 'ok';
    case 'complete':
      await completeWait(driver, op);
      request.phase = 'acted';
      return 'ok';
  }
}

/** A new operation (no event yet): the run's budgets first, then its first event. */
async function startOperation(driver: Driver, request: OpRequest): Promise<ActResult> {
  const { session } = driver;
  const { state, deps } = session;
  const now = deps.clock.now();
  const budgets = state.started.budgets;
  if (request.op > budgets.maxSteps) {
    driver.stop({ kind: 'fail', code: 'budget_exceeded:steps', message: `operation ${request.op} would pass the run's ${plural(budgets.maxSteps, 'step')}` });
    return 'stop';
  }
  if (now >= budgets.deadlineAt) {
    driver.stop({
      kind: 'fail',
      code: 'budget_exceeded:deadline',
      message: `deadline ${new Date(budgets.deadlineAt).toISOString()} passed before ${request.kind} "${request.name}"`,
    });
    return 'stop';
  }
  // Nothing new on a lease that may be stale (a frozen process waking up): the next holder does it.
  session.lease.assertFresh(0, session.deadlineAt);
  const spec = request.spec;
  const base = { op: request.op, kind: request.kind, name: request.name };
  request.phase = 'new';
  switch (spec.kind) {
    case 'step':
      await startStep(driver, request, 1);
      return 'ok';
    case 'sleep': {
      const until = Math.min('at' in spec.until ? spec.until.at : now + Math.round(spec.until.seconds * 1000), budgets.deadlineAt);
      await session.append({ ...base, type: 'op_started', attempt: 1, notAfter: Math.max(until, 1), wait: { kind: 'timer', until: Math.max(until, 1) } });
      return 'ok';
    }
    case 'signal': {
      const until = Math.min(now + Math.round(spec.timeoutSeconds * 1000), budgets.deadlineAt);
      const payloadSchema = jsonSchemaOf(spec.payload, 'input');
      await session.append({ ...base, type: 'op_started', attempt: 1, notAfter: until, wait: { kind: 'signal', signal: spec.signal, until, payloadSchema } });
      return 'ok';
    }
    case 'approval': {
      const problem = notJson(spec.args);
      if (problem || spec.args === undefined) {
        request.reject(new WorkflowUsageError(`approval "${request.name}": its args must be JSON (${problem ?? 'undefined'})`));
        request.phase = 'acted';
        return 'ok';
      }
      const args = spec.args as JsonValue;
      const until = spec.timeoutSeconds === undefined ? budgets.deadlineAt : Math.min(now + Math.round(spec.timeoutSeconds * 1000), budgets.deadlineAt);
      await session.append({
        ...base,
        type: 'op_started',
        attempt: 1,
        notAfter: until,
        wait: {
          kind: 'approval',
          argsHash: hashJson(deps.codec.redactJson(args)),
          args: { kind: 'inline', value: args },
          ...(spec.schema ? { argsSchema: jsonSchemaOf(spec.schema, 'input') } : {}),
          until,
        },
      });
      return 'ok';
    }
    case 'child':
      await startChildOp(driver, request);
      return 'ok';
    case 'now':
    case 'random':
    case 'uuid': {
      const value = spec.kind === 'now' ? now : spec.kind === 'random' ? randomInt(0, 2 ** 47) / 2 ** 47 : randomUUID();
      await session.append({ ...base, type: 'op_result', ok: true, source: 'value', output: { kind: 'inline', value } });
      return 'ok';
    }
  }
}

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  try {
    const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io }) as Record<string, unknown>;
    delete json.$schema;
    return json;
  } catch {
    // A schema with no JSON Schema form (a transform, a custom check): the API checks nothing, the code still parses.
    return {};
  }
}

/**
 * An operation that waits for a time or for the outside world. A short wait that ends well inside
 * this invocation is slept here (config.inProcessWaitMs: a one-second retry back-off should not
 * wait for the sweeper); anything longer ends the step, and the head's wakeAt brings the run back.
 */
function waitFor(driver: Driver, request: OpRequest, until: number | undefined): void {
  const { deps, deadlineAt } = driver.session;
  const now = deps.clock.now();
  const inProcess = deps.config.inProcessWaitMs ?? 0;
  if (until !== undefined && until - now <= inProcess && deadlineAt - until > deps.config.marginMs) {
    request.phase = 'running';
    driver.track(async () => {
      await deps.clock.sleep(Math.max(0, until - now));
      request.phase = 'new';
    });
    return;
  }
  request.phase = 'acted';
  if (until !== undefined) request.until = until;
}

/** A wait whose time is up: the timer fires, or the signal, child run or approval times out. */
async function completeWait(driver: Driver, op: OpState): Promise<void> {
  const { session } = driver;
  const wait = op.wait!;
  const base = { type: 'op_result' as const, op: op.op, kind: op.kind, name: op.name };
  const cutShort = session.state.started.budgets.deadlineAt <= (wait.until ?? Infinity) ? ' (the run reached its deadline)' : '';
  switch (wait.kind) {
    case 'timer':
      await session.append({ ...base, ok: true, source: 'timer', output: { kind: 'inline', value: null } });
      return;
    case 'signal':
      await session.append({
        ...base,
        ok: false,
        source: 'timeout',
        errorCode: 'signal_timeout',
        output: { kind: 'inline', value: { error: 'signal_timeout', message: `no signal "${wait.signal}" arrived in time${cutShort}` } },
      });
      return;
    case 'child':
      await cancelChildRun(session, wait.runId, 'the parent workflow stopped waiting');
      await session.append({
        ...base,
        ok: false,
        source: 'timeout',
        errorCode: 'child_timeout',
        output: {
          kind: 'inline',
          value: {
            error: 'child_timeout',
            childRunId: wait.runId,
            message: `child run ${wait.runId} gave no answer by ${new Date(wait.until).toISOString()}${cutShort}`,
          },
        },
      });
      return;
    case 'approval':
      await session.append({
        ...base,
        ok: false,
        source: 'timeout',
        errorCode: 'approval_expired',
        output: { kind: 'inline', value: { error: 'approval_expired', message: `no decision about "${op.name}" was given in time${cutShort}` } },
      });
      return;
  }
}

/** Look whether a started verify-policy step landed; record what verify() saw, and its result if it did. */
async function verifyStep(driver: Driver, request: OpRequest, op: OpState): Promise<void> {
  const { session } = driver;
  const spec = request.spec.kind === 'step' ? request.spec : undefined;
  const verify = spec?.options.verify;
  const timeoutMs = spec ? stepTimeoutMs(spec.options) : 60_000;
  session.lease.assertFresh(timeoutMs, session.deadlineAt);
  const base = { op: op.op, kind: 'step' as const, name: op.name };
  request.phase = 'running';
  driver.track(async () => {
    const notAfter = session.deps.clock.now() + timeoutMs;
    await session.deps.checkpoints?.at('before-verify', `${op.name}#${opCallId(op.op)}`);
    const outcome = verify
      ? await bounded(session, { policy: 'verify', timeoutMs }, (signal) =>
          verify(toolContext(session, { callId: opCallId(op.op) }, op.attempt, signal, notAfter)),
        )
      : ({ ok: true, value: { status: 'unknown' } } as const);
    await session.deps.checkpoints?.at('after-verify', `${op.name}#${opCallId(op.op)}`);
    if (session.lease.lost || session.fenced) return;
    if (!outcome.ok && outcome.why === 'lease_lost') return; // a stale look proves nothing
    const seen = outcome.ok ? (outcome.value as { status?: unknown; output?: unknown }) : { status: 'unknown' };
    const status = seen.status === 'landed' || seen.status === 'not_landed' ? seen.status : 'unknown';
    const landedJson = status === 'landed' ? notJson(seen.output) : undefined;
    await session.append({ ...base, type: 'op_verified', status: landedJson ? 'unknown' : status });
    if (status === 'landed' && !landedJson) {
      const isVoid = seen.output === undefined;
      await session.append({
        ...base,
        type: 'op_result',
        ok: true,
        source: 'verify',
        attempt: op.attempt,
        output: { kind: 'inline', value: isVoid ? null : (seen.output as JsonValue) },
        ...(isVoid ? { void: true as const } : {}),
      });
    }
    request.phase = 'new';
  });
}
