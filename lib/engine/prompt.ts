import { agentPins } from '../core/events.js';
import type { JsonValue } from '../core/json.js';
import type { LoggedCall, LoggedMessage, ModelCall, ModelMessage, ModelRequest } from '../core/messages.js';
import { MessageMemo } from '../core/message-memo.js';
import { contextPlan, elidedText, messageFate, summaryPreamble, type ContextPlan } from '../core/context-policy.js';
import type { RunState } from '../core/state.js';
import type { PayloadCodec } from './payload-codec.js';
import { mayCarryAttachments, messageAttachments } from './attachments.js';

/**
 * Each logged message as the model reads it, kept between model calls (core/message-memo.ts): its
 * bodies resolve to the same text every time (content-addressed, hash-checked). The copies are
 * frozen: they go to every later request, so a client that wrote into one would change what the
 * model is sent next turn; it gets a TypeError instead.
 */
const resolved = new MessageMemo<ModelMessage>();

/**
 * Build the model request from folded state. Every body is resolved by the same rule live and on
 * replay (through the codec's content-addressed cache, hash-checked), from the pinned prompt,
 * tools and model id.
 */
export async function buildModelRequest(state: RunState, codec: PayloadCodec, maxOutputTokens: number): Promise<ModelRequest> {
  const plan = contextPlan(state);
  if (plan) return { ...(await plannedRequest(state, codec, maxOutputTokens, plan)), turns: plan.turns };
  const memo = resolved.of(state.messages);
  const messages = new Array<ModelMessage>(state.messages.length);
  for (let i = 0; i < state.messages.length; i++) {
    const m = state.messages[i]!;
    // Inline and already-resolved bodies are not awaited: an await costs a microtask hop even for
    // a plain value, and a cold container resolves its whole history here.
    messages[i] = memo.get(i) ?? memo.set(i, messageNow(m, codec) ?? (await resolveMessage(m, codec, state.started.tenant)));
  }
  return requestWith(state, codec, messages, maxOutputTokens);
}

/** A request of these messages with what the run pinned: model, prompt, tools, output schema and settings. */
async function requestWith(state: RunState, codec: PayloadCodec, messages: ModelMessage[], maxOutputTokens: number): Promise<ModelRequest> {
  const { model, prompt } = agentPins(state.started);
  return {
    modelId: model.id,
    system: codec.textNow(prompt.text) ?? (await codec.resolveText(prompt.text)),
    messages,
    tools: state.started.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    maxOutputTokens,
    ...(state.started.output ? { output: { name: OUTPUT_FORMAT_NAME, schema: state.started.output.schema } } : {}),
    ...(model.settings ? { settings: model.settings } : {}),
  };
}

/** The name the output format goes by on the wire (OpenAI's json_schema.name, Bedrock's jsonSchema.name). */
export const OUTPUT_FORMAT_NAME = 'final_answer';
/**
 * The request under a context policy (core/context-policy.ts): the input, the summary, the older
 * turns as the policy keeps them and the last turns verbatim. Decided from folded state only, so
 * it is the same live and on replay; bodies of dropped or shortened messages are never fetched.
 */
async function plannedRequest(state: RunState, codec: PayloadCodec, maxOutputTokens: number, plan: ContextPlan): Promise<ModelRequest> {
  const memo = resolved.of(state.messages);
  const messages: ModelMessage[] = [];
  const mode = plan.policy.olderToolResults === 'reference' ? 'reference' : 'summary';
  for (let i = 0; i < state.messages.length; i++) {
    const m = state.messages[i]!;
    const fate = messageFate(plan, i, m);
    if (fate === 'drop') continue;
    if (fate === 'elide' && m.role === 'tool') messages.push(frozen(m, elidedText(m, mode)));
    else messages.push(memo.get(i) ?? memo.set(i, messageNow(m, codec) ?? (await resolveMessage(m, codec, state.started.tenant))));
    // The summary stands right after the input, in place of the turns it covers.
    if (i === 0 && plan.summary) {
      const text = codec.textNow(plan.summary.summary) ?? (await codec.resolveText(plan.summary.summary));
      messages.push(Object.freeze({ role: 'user', content: summaryPreamble(plan.summary.turns) + text }));
    }
  }
  return requestWith(state, codec, messages, maxOutputTokens);
}

/** The message as the model reads it, when none of its bodies needs a round trip. */
function messageNow(m: LoggedMessage, codec: PayloadCodec): ModelMessage | undefined {
  // Attachments need their bytes from the blob store: a round trip.
  if (m.role === 'user' && mayCarryAttachments(m.content)) return undefined;
  if (m.role !== 'assistant') {
    const content = codec.textNow(m.content);
    return content === undefined ? undefined : frozen(m, content);
  }
  const text = codec.textNow(m.text);
  if (text === undefined) return undefined;
  for (const c of m.calls) if (c.args.kind !== 'inline') return undefined;
  // map, not push: an array of exactly its length (push grows one to 17 slots), and a cold
  // container copies its whole history here.
  return frozen(
    m,
    text,
    m.calls.map((c) => modelCall(c, (c.args as Extract<LoggedCall['args'], { kind: 'inline' }>).value)),
  );
}

async function resolveMessage(m: LoggedMessage, codec: PayloadCodec, tenant: string): Promise<ModelMessage> {
  if (m.role === 'user') {
    const attachments = await messageAttachments(codec.blobStore, tenant, await codec.resolve(m.content));
    const content = await codec.resolveText(m.content);
    return Object.freeze(attachments ? { role: 'user', content, attachments: Object.freeze(attachments) } : { role: 'user', content });
  }
  if (m.role !== 'assistant') return frozen(m, await codec.resolveText(m.content));
  const calls: ModelCall[] = [];
  for (const c of m.calls) calls.push(modelCall(c, c.args.kind === 'inline' ? c.args.value : await codec.resolve(c.args)));
  return frozen(m, await codec.resolveText(m.text), calls);
}

function modelCall(c: LoggedCall, args: JsonValue): ModelCall {
  return Object.freeze({ callId: c.callId, providerId: c.providerId, name: c.name, args });
}

/** The model's copy of `m`, its text (or content) resolved and its calls given; frozen. */
function frozen(m: LoggedMessage, text: string, calls?: ModelCall[]): ModelMessage {
  let out: ModelMessage;
  if (m.role === 'user') out = { role: 'user', content: text };
  else if (m.role === 'tool') out = { role: 'tool', callId: m.callId, providerId: m.providerId, name: m.name, isError: m.isError, content: text };
  else out = { role: 'assistant', text, calls: Object.freeze(calls ?? []) as ModelCall[] };
  return Object.freeze(out);
}
