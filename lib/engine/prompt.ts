import type { ModelMessage, ModelRequest } from '../core/messages.js';
import type { RunState } from '../core/state.js';
import type { PayloadCodec } from './payload-codec.js';

/**
 * Build the model request from folded state. Every body is resolved by the same rule live and on
 * replay (through the codec's content-addressed cache, hash-checked), from the pinned prompt,
 * tools and model id.
 */
export async function buildModelRequest(state: RunState, codec: PayloadCodec, maxOutputTokens: number): Promise<ModelRequest> {
  // Inline and already-resolved bodies are not awaited (an await costs a microtask hop even for a
  // plain value): a long run's prompt has thousands of them.
  const messages: ModelMessage[] = [];
  for (const m of state.messages) {
    if (m.role === 'user') messages.push({ role: 'user', content: codec.textNow(m.content) ?? (await codec.resolveText(m.content)) });
    else if (m.role === 'tool') {
      messages.push({
        role: 'tool',
        callId: m.callId,
        providerId: m.providerId,
        name: m.name,
        isError: m.isError,
        content: codec.textNow(m.content) ?? (await codec.resolveText(m.content)),
      });
    } else {
      const calls = [];
      for (const c of m.calls) {
        calls.push({ callId: c.callId, providerId: c.providerId, name: c.name, args: c.args.kind === 'inline' ? c.args.value : await codec.resolve(c.args) });
      }
      messages.push({ role: 'assistant', text: codec.textNow(m.text) ?? (await codec.resolveText(m.text)), calls });
    }
  }
  return {
    modelId: state.started.model.id,
    system: codec.textNow(state.started.prompt.text) ?? (await codec.resolveText(state.started.prompt.text)),
    messages,
    tools: state.started.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    maxOutputTokens,
  };
}
