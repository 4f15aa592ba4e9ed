import { decide, type Action, type DecideContext } from '../core/decide.js';
import { costOf } from '../core/budgets.js';
import { CallDoesNotFitError, errorCode, errorMessage, ModelError } from '../core/errors.js';
import type { Body } from '../core/body.js';
import { agentPins, type EventDraft, type ModelReservation } from '../core/events.js';
import { jsonShapeProblem } from '../core/json.js';
import type { ModelResponse, ModelResponseCall } from '../core/messages.js';
import { zodIssuesText } from '../core/zod-issues.js';
import { approvalGate, expireApprovals } from './approvals.js';
import { rethrowHalt } from './checkpoints.js';
import type { RunSession } from './run-session.js';
import { buildModelRequest } from './prompt.js';
import { MAX_CRASHED_TOOL_ATTEMPTS, MAX_JSON_DEPTH } from '../core/limits.js';
import { executeCall, verifyCall, type PreparedCall } from './tool-runner.js';
import { callWait, completeWaits, startWait } from './waits.js';
import { cancelChildren, ensureChildren, startChildCall } from './child-runs.js';
import { checkAnswer, outputValidator } from './output-check.js';
import { carriedCall, carriedReservation } from './carried-reservation.js';
import { summarizeContext } from './context-summary.js';
import { streamPublisherFor } from './stream-publisher.js';
import { runWorkflowTurn } from './workflow/workflow-runner.js';
import type { TurnOutcome } from './turn-outcome.js';
import { openBoundedCall } from './bounded-call.js';
import { modelCallBounds } from './model-bounds.js';

export type { TurnOutcome } from './turn-outcome.js';

export function decideContext(session: RunSession): DecideContext {
  const { registry, models, clock, config } = session.deps;
  return {
    now: clock.now(),
    hasTool: (name, hash) => registry.tool(name, hash, session.state.started.agent.name) !== undefined,
    hasModel: (id) => models.resolve(id) !== undefined,
    maxToolAttempts: config.maxToolAttempts,
    maxCrashedToolAttempts: config.maxCrashedToolAttempts ?? MAX_CRASHED_TOOL_ATTEMPTS,
  };
}

/**
 * The one loop, for fresh and resumed runs alike: decide from folded state, write the decision,
 * act, write the result. A turn is one model call: the tool calls of the previous response (when
 * the last of their results carries the reservation, the model is called at once under it), then
 * the model call and whatever follows it up to the next tool calls. The loop returns there, or at
 * a second model call, so the caller can check its time and enqueue the next step.
 */
export async function runTurn(session: RunSession): Promise<TurnOutcome> {
  // A workflow's code decides instead of a model: the same step, its own turn (workflow/).
  if (session.state.workflow) return runWorkflowTurn(session);
  let modelCalls = 0;
  for (;;) {
    // A cancel seen by the heartbeat must be ingested before any new call is made.
    if (session.cancel.signal.aborted && !session.state.cancel && !session.state.outcome) return { kind: 'continued' };
    const action = decide(session.state, decideContext(session));
    switch (action.kind) {
      case 'done':
        return { kind: 'ended' };
      case 'complete':
        await session.append({ type: 'run_completed', answer: action.answer, ...(action.output ? { output: action.output } : {}) });
        return { kind: 'ended' };
      case 'fail':
        await session.append({ type: 'run_failed', code: action.code, message: action.message });
        return { kind: 'ended' };
      case 'cancel':
        await cancelChildren(session); // cancel cascades, before the parent's end is recorded
        await session.append({ type: 'run_cancelled', unresolved: action.unresolved });
        return { kind: 'ended' };
      case 'attention':
        await session.append({
          type: 'attention_required',
          reason: action.reason,
          detail: action.detail,
          ...(action.callId ? { callId: action.callId } : {}),
        });
        continue;
      case 'park':
        if (await ensureChildren(session)) continue;
        return { kind: 'parked', reasons: action.reasons };
      case 'wait':
        // A child whose create a crash cut off is created now (the same create, idempotent).
        if (await ensureChildren(session)) continue;
        return { kind: 'waiting', ...(action.until !== undefined ? { until: action.until } : {}), reason: action.reason };
      case 'expire_approvals':
        await expireApprovals(session, action.callIds);
        continue;
      case 'complete_waits':
        await completeWaits(session, action.callIds);
        continue;
      case 'reject_calls':
        for (const r of action.rejects) {
          await session.append(errorResult(r.callId, r.code, r.message, 'validation'));
        }
        continue;
      case 'verify':
        await parkIfNeverFits(session, () => runVerify(session, action.callId));
        continue;
      case 'run_tools':
        if (modelCalls > 0) return { kind: 'continued' };
        if (await parkIfNeverFits(session, () => runTools(session, action))) modelCalls++;
        continue;
      case 'summarize':
        // A model call of its own (context policy): the turn's call comes after it, in the next step.
        if (modelCalls > 0) return { kind: 'continued' };
        modelCalls++;
        await parkIfNeverFits(session, () => summarizeContext(session, action));
        continue;
      case 'call_model':
        if (modelCalls > 0) return { kind: 'continued' };
        modelCalls++;
        await parkIfNeverFits(session, () => callModel(session, action));
        continue;
    }
  }
}

function errorResult(callId: string, code: string, message: string, source: 'validation' | 'timeout'): EventDraft {
  return { type: 'tool_result', callId, ok: false, output: { kind: 'inline', value: { error: code, message } }, source, errorCode: code };
}

/**
 * A call that no invocation of this length can run parks the run (run-level attention) instead of
 * handing the step on forever. The fit is checked before anything starts, so nothing ran.
 */
async function parkIfNeverFits<T>(session: RunSession, act: () => Promise<T>): Promise<T | undefined> {
  try {
    return await act();
  } catch (error) {
    if (!(error instanceof CallDoesNotFitError)) throw error;
    await session.append({ type: 'attention_required', reason: 'call_does_not_fit', detail: error.message });
    return undefined;
  }
}

async function runVerify(session: RunSession, callId: string): Promise<void> {
  const call = session.state.calls[callId];
  const pinned = session.state.started.tools.find((t) => t.name === call?.name);
  const impl = pinned && session.deps.registry.tool(pinned.name, pinned.schemaHash, session.state.started.agent.name);
  if (!call || !pinned || !impl) {
    await session.append({ type: 'tool_verified', callId, status: 'unknown' });
    return;
  }
  session.lease.assertFresh(pinned.timeoutMs, session.deadlineAt);
  const args = impl.input.parse(await session.deps.codec.resolve(call.args));
  await verifyCall(session, { call, pinned, impl, args });
}

/**
 * Start and run the calls; when the last result carried the next model reservation, make that
 * model call too (returns true then).
 */
async function runTools(session: RunSession, action: Extract<Action, { kind: 'run_tools' }>): Promise<boolean> {
  const { registry, codec, clock } = session.deps;
  const prepared: PreparedCall[] = [];
  for (const { callId, attempt } of action.calls) {
    const call = session.state.calls[callId];
    const pinned = session.state.started.tools.find((t) => t.name === call?.name);
    const impl = pinned && registry.tool(pinned.name, pinned.schemaHash, session.state.started.agent.name);
    if (!call || !pinned || !impl) continue; // decide only starts calls whose code exists
    // Tools run on the arguments read from the folded event, validated by the implementation.
    const raw = await codec.resolve(call.args);
    const parsed = impl.input.safeParse(raw);
    if (!parsed.success) {
      const where = zodIssuesText(parsed.error);
      await session.append(errorResult(callId, 'invalid_arguments', `arguments do not match ${pinned.name}'s schema: ${where}`, 'validation'));
      continue;
    }
    // Approval (requested, or re-checked against these exact arguments) comes before any start.
    if ((await approvalGate(session, call, pinned, impl, raw, parsed.data)) !== 'run') continue;
    if (pinned.wait?.kind === 'child') {
      await startChildCall(session, call, attempt, pinned); // a child run: this call holds no Lambda
      continue;
    }
    const wait = callWait(pinned, impl, parsed.data, clock.now(), session.state.started.budgets.deadlineAt);
    if (wait) {
      await startWait(session, call, attempt, wait); // a durable wait: nothing runs
      continue;
    }
    prepared.push({ call, attempt, pinned, impl, args: parsed.data });
  }
  if (prepared.length === 0) return false;
  session.lease.assertFresh(Math.max(...prepared.map((p) => p.pinned.timeoutMs)), session.deadlineAt);
  // Every started marker is written before any tool runs; then the calls run concurrently.
  for (const p of prepared) {
    await session.append({ type: 'tool_started', callId: p.call.callId, attempt: p.attempt, notAfter: clock.now() + p.pinned.timeoutMs });
    p.call = session.state.calls[p.call.callId] ?? p.call;
  }
  session.carryReservation = (after) => carriedReservation(session, after, decideContext(session));
  let results: PromiseSettledResult<void>[];
  try {
    results = await Promise.allSettled(prepared.map((p) => executeCall(session, p, session.cancel.signal)));
  } finally {
    delete session.carryReservation;
  }
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  const reservation = carriedCall(session);
  if (!reservation) return false;
  await invokeModel(session, reservation);
  return true;
}

async function callModel(session: RunSession, action: Extract<Action, { kind: 'call_model' }>): Promise<void> {
  const { models, config } = session.deps;
  if (!models.resolve(agentPins(session.state.started).model.id)) return; // decide checks availability; a model that vanished mid-step is seen next decide
  session.lease.assertFresh(config.modelTimeoutMs, session.deadlineAt);
  // The reservation is written before the call: a crash after it never refunds the budget.
  await session.append({ type: 'model_started', step: action.step, maxOutputTokens: action.maxOutputTokens, reserved: action.reserved });
  await invokeModel(session, action);
}

/** The model call under a reservation already in the log (its own model_started, or carried). */
async function invokeModel(session: RunSession, action: ModelReservation): Promise<void> {
  const { models, codec, clock, checkpoints, metrics } = session.deps;
  const state = session.state;
  const { model } = agentPins(state.started);
  const client = models.resolve(model.id);
  // The reservation stays spent and unanswered: decide treats it as any model_started with no response.
  if (!client) return;
  const request = await buildModelRequest(session.state, codec, action.maxOutputTokens);
  const bound = openBoundedCall(modelCallBounds(session));
  const started = clock.now();
  // Streaming (when the engine has a stream port): the text as it comes, beside the log.
  const publisher = streamPublisherFor(session);
  let draft: EventDraft;
  try {
    await checkpoints?.at('before-model', `step ${action.step}`);
    const response = await bound.settle(client.complete(request, { signal: bound.signal, ...(publisher ? { onText: publisher.onText } : {}) }));
    await checkpoints?.at('after-model', `step ${action.step}`);
    const seq = session.state.lastSeq + 1;
    const usage = { inputTokens: response.usage.inputTokens, outputTokens: response.usage.outputTokens };
    draft = {
      type: 'model_response',
      text: response.text ? { kind: 'inline', value: response.text } : null,
      calls: response.calls.map((c, i) => ({ callId: `${seq}-${i}`, providerId: c.providerId, name: c.name, ...recordableArgs(c) })),
      usage,
      costUsd: costOf(model.price, usage.inputTokens, usage.outputTokens),
      stopReason: response.stopReason,
      ...answerVerdict(session, response),
    };
    metrics?.count('InputTokens', usage.inputTokens);
    metrics?.count('OutputTokens', usage.outputTokens);
    metrics?.cost(costOf(model.price, usage.inputTokens, usage.outputTokens));
  } catch (error) {
    publisher?.stop(); // a failed or abandoned call's partial text is not flushed
    rethrowHalt(error);
    if (session.lease.lost) throw error;
    const retryable = error instanceof ModelError ? error.retryable : true;
    draft = { type: 'model_failed', code: errorCode(error), message: errorMessage(error), retryable };
  } finally {
    bound.close();
    metrics?.duration('ModelLatency', clock.now() - started);
  }
  // The last text is written before the response, never after it (bounded: a preview never holds the log up).
  await publisher?.finish();
  await session.append(draft);
}

/**
 * Under an output schema, a final answer (no tool calls) is checked before its response is
 * written: the verdict is logged with it, so decide() and a resumed run read it from the log.
 */
function answerVerdict(session: RunSession, response: ModelResponse): { output?: Body; outputError?: string } {
  const pinned = session.state.started.output;
  if (!pinned || response.calls.length > 0) return {};
  const verdict = checkAnswer(outputValidator(session.deps.registry, session.state.started.agent, pinned), response.text);
  return 'output' in verdict ? { output: { kind: 'inline', value: verdict.output } } : { outputError: verdict.outputError };
}

/**
 * A model's arguments are outside input: nested too deep (or holding `__proto__`) they would
 * overflow the recursive code that hashes and stores them, crashing every attempt at the same
 * response. Such arguments are not recorded; the call carries argsError, and the model gets
 * "invalid arguments" back as the tool result like any other malformed call.
 */
function recordableArgs(call: ModelResponseCall): { args: Body; argsError?: string } {
  const problem = call.argsError === undefined ? jsonShapeProblem(call.args, MAX_JSON_DEPTH, 'arguments') : undefined;
  if (problem) return { args: { kind: 'inline', value: '(not recorded)' }, argsError: `${problem.path}: ${problem.message}` };
  return { args: { kind: 'inline', value: call.args }, ...(call.argsError !== undefined ? { argsError: call.argsError } : {}) };
}
