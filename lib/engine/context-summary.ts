import { costOf } from '../core/budgets.js';
import { SUMMARY_SYSTEM, summaryDue } from '../core/context-policy.js';
import type { Action } from '../core/decide.js';
import { errorCode, errorMessage, ModelError } from '../core/errors.js';
import type { EventDraft } from '../core/events.js';
import type { LoggedMessage, ModelRequest, ModelResponse } from '../core/messages.js';
import type { RunState } from '../core/state.js';
import type { ModelClient } from '../ports/model-client.js';
import { openBoundedCall } from './bounded-call.js';
import { rethrowHalt } from './checkpoints.js';
import { modelCallBounds } from './model-bounds.js';
import type { PayloadCodec } from './payload-codec.js';
import type { RunSession } from './run-session.js';

/**
 * The context policy's summary call: write before act, as a turn's model call is. The
 * reservation (model_started, purpose `summary`, with the turns the summary will cover) is in the
 * log before the model is asked; its answer (model_response, purpose `summary`) is recorded
 * before anything uses it. The fold then puts the summary in place of those turns, so a resumed
 * or replayed run reads it from the log and never asks again. A crash between the two leaves a
 * spent reservation with no answer, as for any model call (checkpoints.ts: before-summary,
 * after-summary); decide() then asks again under a new reservation.
 */
export async function summarizeContext(session: RunSession, action: Extract<Action, { kind: 'summarize' }>): Promise<void> {
  const { models, config, codec, metrics } = session.deps;
  const summarize = session.state.started.context?.summarize;
  const client = summarize && models.resolve(summarize.model);
  if (!summarize || !client) return; // decide checks availability; a model that vanished mid-step is seen next decide
  session.lease.assertFresh(config.modelTimeoutMs, session.deadlineAt);
  await session.append({
    type: 'model_started',
    step: action.step,
    maxOutputTokens: action.maxOutputTokens,
    reserved: action.reserved,
    purpose: 'summary',
    covers: { turns: action.turns },
  });
  const request = await buildSummaryRequest(session.state, codec, summarize.model, action.maxOutputTokens);
  let draft: EventDraft;
  try {
    const response = await askSummaryModel(session, client, request, `step ${action.step}`);
    const usage = { inputTokens: response.usage.inputTokens, outputTokens: response.usage.outputTokens };
    const costUsd = costOf(summarize.price, usage.inputTokens, usage.outputTokens);
    // Tool calls in a summary answer are ignored: the summary is text, and no call may run from it.
    draft = {
      type: 'model_response',
      purpose: 'summary',
      text: { kind: 'inline', value: response.text },
      calls: [],
      usage,
      costUsd,
      stopReason: response.stopReason,
    };
    metrics?.count('InputTokens', usage.inputTokens);
    metrics?.count('OutputTokens', usage.outputTokens);
    metrics?.cost(costUsd);
  } catch (error) {
    rethrowHalt(error);
    if (session.lease.lost) throw error;
    const retryable = error instanceof ModelError ? error.retryable : true;
    draft = { type: 'model_failed', code: errorCode(error), message: errorMessage(error), retryable };
  }
  await session.append(draft);
}

/**
 * What the summary model is asked: the summary so far and the older turns it does not cover yet,
 * as one transcript (no tool messages: nothing for a provider to pair), under fixed instructions.
 * Built from folded state, like the turn's prompt.
 */
export async function buildSummaryRequest(state: RunState, codec: PayloadCodec, modelId: string, maxOutputTokens: number): Promise<ModelRequest> {
  const due = summaryDue(state);
  const lines: string[] = [];
  if (state.context) lines.push(`Summary so far (turns 1-${state.context.turns}):`, await codec.resolveText(state.context.summary), '');
  lines.push(`Turns to merge into it (up to turn ${due?.turns ?? 0}):`);
  for (let i = due?.from ?? 0; i < (due?.to ?? 0); i++) lines.push(await transcriptLine(state.messages[i]!, codec));
  return { modelId, system: SUMMARY_SYSTEM, messages: [{ role: 'user', content: lines.join('\n') }], tools: [], maxOutputTokens, purpose: 'summary' };
}

async function transcriptLine(m: LoggedMessage, codec: PayloadCodec): Promise<string> {
  if (m.role === 'user') return `user: ${await codec.resolveText(m.content)}`;
  if (m.role === 'tool') return `result of ${m.name} (${m.callId})${m.isError ? ' [error]' : ''}: ${await codec.resolveText(m.content)}`;
  const parts = [`assistant: ${await codec.resolveText(m.text)}`];
  for (const c of m.calls) parts.push(`  call ${c.name} (${c.callId}): ${await codec.resolveText(c.args)}`);
  return parts.join('\n');
}

/** The summary call, bounded by the model timeout and the lease (as a turn's model call is). */
async function askSummaryModel(session: RunSession, client: ModelClient, request: ModelRequest, detail: string): Promise<ModelResponse> {
  const { clock, checkpoints, metrics } = session.deps;
  const bound = openBoundedCall(modelCallBounds(session));
  const started = clock.now();
  try {
    await checkpoints?.at('before-summary', detail);
    const response = await bound.settle(client.complete(request, { signal: bound.signal }));
    await checkpoints?.at('after-summary', detail);
    return response;
  } finally {
    bound.close();
    metrics?.duration('ModelLatency', clock.now() - started);
  }
}
