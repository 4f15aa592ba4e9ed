import type { JsonValue } from '../core/json.js';
import type { ModelAttachment, ModelRequest, ModelResponse } from '../core/messages.js';
import type { ModelSettings } from '../core/model-settings.js';
import type { ModelClient, ModelResolver } from '../ports/model-client.js';

export interface ScriptedTurn {
  text?: string;
  calls?: { name: string; args: JsonValue; providerId?: string; argsError?: string }[];
}

/** A turn, or a function of the request for replies that depend on tool results. */
export type ScriptStep = ScriptedTurn | ((request: ModelRequest) => ScriptedTurn);

export interface ScriptedModelOptions {
  /**
   * The answer to a context policy's summary call (request.purpose `summary`). Default: a short
   * text that is a pure function of the request, so a repeated summary call gets the same one.
   */
  summary?: (request: ModelRequest) => string;
}

/**
 * A deterministic model: the reply is chosen by how many assistant turns the conversation already
 * holds (request.turns when a context policy left some out of the request), so a resumed run gets
 * exactly the reply the uninterrupted one got. Token usage is a pure function of the text, so
 * budgets replay identically too.
 */
export class ScriptedModel implements ModelClient {
  calls = 0;
  /** The settings each call was sent (undefined: none pinned), in call order: what a test asserts. */
  readonly settings: (ModelSettings | undefined)[] = [];
  /**
   * The attachments each call was sent (every user message's, in order; empty: none), in call
   * order: a test asserts the parts and their bytes (`Buffer.from(a.data, 'base64')`).
   */
  readonly attachments: ModelAttachment[][] = [];
  constructor(
    private readonly script: ScriptStep[],
    private readonly options: ScriptedModelOptions = {},
  ) {}

  async complete(request: ModelRequest, options: { signal: AbortSignal }): Promise<ModelResponse> {
    if (options.signal.aborted) throw options.signal.reason;
    this.calls++;
    this.settings.push(request.settings);
    this.attachments.push(request.messages.flatMap((m) => (m.role === 'user' ? (m.attachments ?? []) : [])));
    const turn = request.turns ?? request.messages.filter((m) => m.role === 'assistant').length;
    const step = this.script[Math.min(turn, this.script.length - 1)];
    const reply =
      request.purpose === 'summary'
        ? { text: this.options.summary?.(request) ?? scriptedSummary(request) }
        : typeof step === 'function'
          ? step(request)
          : (step ?? { text: 'done' });
    const calls = (reply.calls ?? []).map((c, i) => ({
      // Like vLLM and Ollama, reuse ids across turns: Logbook's callId must not depend on them.
      providerId: c.providerId ?? `call_${i}`,
      name: c.name,
      args: c.args,
      ...(c.argsError !== undefined ? { argsError: c.argsError } : {}),
    }));
    // Attachments count by their reference, not their base64 (a model charges an image by its
    // pixels, not its bytes): usage stays small and the same for the same request.
    const inputChars = request.system.length + JSON.stringify(request.messages.map(withoutAttachmentData)).length;
    const outputChars = (reply.text ?? '').length + JSON.stringify(calls).length;
    return {
      text: reply.text ?? '',
      calls,
      usage: { inputTokens: Math.ceil(inputChars / 4), outputTokens: Math.min(request.maxOutputTokens, Math.ceil(outputChars / 4)) },
      stopReason: calls.length > 0 ? 'tool_use' : 'end_turn',
    };
  }
}

function withoutAttachmentData(m: ModelRequest['messages'][number]): unknown {
  return m.role === 'user' && m.attachments ? { ...m, attachments: m.attachments.map(({ data: _data, ...ref }) => ref) } : m;
}

/** The default summary: how many transcript lines it read and the last of them, shortened. */
function scriptedSummary(request: ModelRequest): string {
  const first = request.messages[0];
  const lines = first && first.role === 'user' ? first.content.split('\n') : [];
  return `scripted summary of ${lines.length} lines; last: ${(lines.at(-1) ?? '').slice(0, 80)}`;
}

/** Resolves a fixed set of model ids; any other id is "gone" and the run parks. */
export class StaticModelResolver implements ModelResolver {
  constructor(private readonly clients: Record<string, ModelClient>) {}
  resolve(modelId: string): ModelClient | undefined {
    return this.clients[modelId];
  }
}
