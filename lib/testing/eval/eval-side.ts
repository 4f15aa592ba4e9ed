import type { Body } from '../../core/body.js';
import { parseEvent, type EventOf, agentPins } from '../../core/events.js';
import type { JsonValue } from '../../core/json.js';
import type { RunState } from '../../core/state.js';

/** One tool call a model asked for, as its run's log holds it (redacted), with its result if it got one. */
export interface EvalToolCall {
  callId: string;
  name: string;
  /** The arguments as logged; absent when the model sent arguments that were not valid JSON (`argsError`). */
  args?: JsonValue;
  argsError?: string;
  result?: { ok: boolean; output: JsonValue; errorCode?: string };
}

/** How a run ended, or where it stands (`not_started`: the candidate refused the recorded input). */
export type EvalRunStatus = 'completed' | 'failed' | 'cancelled' | 'parked' | 'running' | 'not_started';

/** One side of an eval, the recorded run or the candidate's: what scorers compare. */
export interface EvalSide {
  runId: string;
  agent: { name: string; version: string };
  /** The pinned prompt version and model id (the candidate's may differ from the recorded run's). */
  promptVersion?: string;
  modelId?: string;
  status: EvalRunStatus;
  /** The final answer's text (a JSON answer as its text). */
  answer?: string;
  /** The structured output, for an agent with an output schema. */
  output?: JsonValue;
  /** Why it failed (run_failed's code and message), or why the candidate could not start. */
  failure?: { code: string; message: string };
  /** Every call the model asked for, in order (summary calls of a context policy are not tool calls). */
  toolCalls: EvalToolCall[];
  usage: { steps: number; inputTokens: number; outputTokens: number; costUsd: number };
}

export type BodyResolver = (body: Body) => Promise<JsonValue>;

const text = (value: JsonValue) => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * One side from a run's log, folded into `state`: its calls in order with their results, its
 * outcome and usage, every payload resolved (blob references included) by `resolve`.
 */
export async function sideOf(events: readonly unknown[], state: RunState, resolve: BodyResolver): Promise<EvalSide> {
  const { started } = state;
  const toolCalls: EvalToolCall[] = [];
  for (const raw of events) {
    const event = parseEvent(raw);
    if (event.type !== 'model_response' || event.purpose === 'summary') continue;
    for (const call of event.calls) toolCalls.push(await toolCall(call, state, resolve));
  }
  const side: EvalSide = {
    runId: started.runId,
    agent: { ...started.agent },
    promptVersion: agentPins(started).prompt.version,
    modelId: agentPins(started).model.id,
    status: state.status,
    toolCalls,
    usage: { ...state.usage },
  };
  const outcome = state.outcome;
  if (outcome?.type === 'completed') {
    side.answer = text(await resolve(outcome.answer));
    if (outcome.output) side.output = await resolve(outcome.output);
  } else if (outcome?.type === 'failed') {
    side.failure = { code: outcome.code, message: outcome.message };
  }
  return side;
}

async function toolCall(call: EventOf<'model_response'>['calls'][number], state: RunState, resolve: BodyResolver): Promise<EvalToolCall> {
  const out: EvalToolCall = { callId: call.callId, name: call.name };
  if (call.argsError !== undefined) out.argsError = call.argsError;
  else out.args = await resolve(call.args);
  const result = state.calls[call.callId]?.result;
  if (result) {
    out.result = { ok: result.ok, output: await resolve(result.output), ...(result.errorCode !== undefined ? { errorCode: result.errorCode } : {}) };
  }
  return out;
}

/** The follow-up user messages of a run (user_message events), in order, resolved. */
export async function followUps(events: readonly unknown[], resolve: BodyResolver): Promise<JsonValue[]> {
  const out: JsonValue[] = [];
  for (const raw of events) {
    const event = parseEvent(raw);
    if (event.type === 'user_message') out.push(await resolve(event.input));
  }
  return out;
}
