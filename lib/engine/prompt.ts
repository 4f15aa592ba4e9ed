import type { LoggedMessage, ModelCall, ModelMessage, ModelRequest } from '../core/messages.js';
import { MessageMemo } from '../core/message-memo.js';
import type { RunState } from '../core/state.js';
import type { PayloadCodec } from './payload-codec.js';

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
  const memo = resolved.of(state.messages);
  const messages: ModelMessage[] = [];
  for (let i = 0; i < state.messages.length; i++) messages.push(memo.get(i) ?? memo.set(i, await resolveMessage(state.messages[i]!, codec)));
  return {
    modelId: state.started.model.id,
    system: codec.textNow(state.started.prompt.text) ?? (await codec.resolveText(state.started.prompt.text)),
    messages,
    tools: state.started.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    maxOutputTokens,
  };
}

async function resolveMessage(m: LoggedMessage, codec: PayloadCodec): Promise<ModelMessage> {
  // Inline and already-resolved bodies are not awaited (an await costs a microtask hop even for a
  // plain value).
  let out: ModelMessage;
  if (m.role === 'user') out = { role: 'user', content: codec.textNow(m.content) ?? (await codec.resolveText(m.content)) };
  else if (m.role === 'tool') {
    out = {
      role: 'tool',
      callId: m.callId,
      providerId: m.providerId,
      name: m.name,
      isError: m.isError,
      content: codec.textNow(m.content) ?? (await codec.resolveText(m.content)),
    };
  } else {
    const calls: ModelCall[] = [];
    for (const c of m.calls) {
      calls.push(Object.freeze({ callId: c.callId, providerId: c.providerId, name: c.name, args: c.args.kind === 'inline' ? c.args.value : await codec.resolve(c.args) }));
    }
    Object.freeze(calls);
    out = { role: 'assistant', text: codec.textNow(m.text) ?? (await codec.resolveText(m.text)), calls };
  }
  return Object.freeze(out);
}
