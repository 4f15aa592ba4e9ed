import { z } from 'zod';
import type { JsonValue } from '../core/json.js';
import type { ModelRequest, ModelResponse, ModelResponseCall, StopReason } from '../core/messages.js';
import { zodIssuesText } from '../core/zod-issues.js';
import { aiSdkSettingOptions } from './ai-sdk-settings.js';
import { MODEL_ERROR, modelError } from './model-errors.js';
import { parseArguments } from './openai-wire.js';
import { assignWireIds } from './wire-ids.js';
import { wireSchema } from './wire-schema.js';

/**
 * The part of the AI SDK's language model specification (`@ai-sdk/provider`, LanguageModelV2 and
 * V3) that Logbook uses, written here so Logbook depends on neither `ai` nor `@ai-sdk/provider`
 * at run time. Only what Logbook sends is typed precisely; what comes back is parsed with zod
 * (aiSdkResultSchema), because it is a third party's object.
 */
export interface AiSdkLanguageModel {
  /** 'v2' (AI SDK 5 providers), 'v3' (AI SDK 6); later versions are tried with the same call. */
  readonly specificationVersion: string;
  /** The provider's name, e.g. `openai.chat`, `anthropic.messages`, `my-gateway.chat`. */
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: AiSdkCallOptions): PromiseLike<unknown>;
  /** Used when the caller streams (onText); a model without it is called through doGenerate. */
  doStream?(options: AiSdkCallOptions): PromiseLike<unknown>;
}

/** The call options Logbook sends: the same shape in V2 and V3. */
export interface AiSdkCallOptions {
  prompt: AiSdkMessage[];
  maxOutputTokens: number;
  tools?: AiSdkFunctionTool[];
  toolChoice?: { type: 'auto' | 'none' | 'required' } | { type: 'tool'; toolName: string };
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
  /** By the provider's options key (`openai`, `anthropic`, ...): see ai-sdk-settings.ts. */
  providerOptions?: Record<string, Record<string, JsonValue>>;
  /** V2 and V3 both: a JSON answer fitting `schema` (providers map it to their own JSON mode). */
  responseFormat?: { type: 'json'; schema: Record<string, unknown>; name: string };
  abortSignal?: AbortSignal;
}

export type AiSdkMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: ({ type: 'text'; text: string } | AiSdkFilePart)[] }
  | { role: 'assistant'; content: ({ type: 'text'; text: string } | AiSdkToolCallPart)[] }
  | { role: 'tool'; content: AiSdkToolResultPart[] };

/** An image or document (V2 and V3 alike): base64 data with its media type; providers map it to their wire. */
export interface AiSdkFilePart {
  type: 'file';
  data: string;
  mediaType: string;
  filename?: string;
}

export interface AiSdkToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  /** The parsed arguments (the provider serializes them for its wire). */
  input: unknown;
}

export interface AiSdkToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: { type: 'text' | 'error-text'; value: string };
}

export interface AiSdkFunctionTool {
  type: 'function';
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** ModelRequest → the call options of `doGenerate` for a model of `provider` (its settings' providerOptions key). */
export function toAiSdkCallOptions(request: ModelRequest, signal: AbortSignal | undefined, provider: string): AiSdkCallOptions {
  const wireId = assignWireIds(request.messages);
  const prompt: AiSdkMessage[] = [];
  if (request.system !== '') prompt.push({ role: 'system', content: request.system });
  for (const m of request.messages) {
    if (m.role === 'user') {
      const files = (m.attachments ?? []).map((a): AiSdkFilePart => ({
        type: 'file',
        data: a.data,
        mediaType: a.mediaType,
        ...(a.name !== undefined ? { filename: a.name } : {}),
      }));
      prompt.push({ role: 'user', content: [{ type: 'text', text: m.content }, ...files] });
    } else if (m.role === 'assistant') {
      prompt.push({
        role: 'assistant',
        content: [
          ...(m.text === '' ? [] : [{ type: 'text' as const, text: m.text }]),
          ...m.calls.map((c): AiSdkToolCallPart => ({
            type: 'tool-call',
            toolCallId: wireId(c.callId, c.providerId),
            toolName: c.name,
            // A copy: messages are frozen and a provider may normalise what it is given.
            input: structuredClone(c.args),
          })),
        ],
      });
    } else {
      const part: AiSdkToolResultPart = {
        type: 'tool-result',
        toolCallId: wireId(m.callId, m.providerId),
        toolName: m.name,
        // Both versions carry the error flag in the output's type; providers map it to their own.
        output: { type: m.isError ? 'error-text' : 'text', value: m.content },
      };
      // The results of one turn go in one tool message, as the AI SDK itself builds them.
      const last = prompt.at(-1);
      if (last?.role === 'tool') last.content.push(part);
      else prompt.push({ role: 'tool', content: [part] });
    }
  }
  const options: AiSdkCallOptions = { prompt, maxOutputTokens: request.maxOutputTokens };
  if (request.tools.length > 0) {
    options.tools = request.tools.map((t) => ({
      type: 'function',
      name: t.name,
      description: t.description,
      inputSchema: wireSchema(t.inputSchema),
    }));
    options.toolChoice = { type: 'auto' };
  }
  // The pinned settings (a tool choice among them replaces the default `auto`).
  Object.assign(options, aiSdkSettingOptions(request.settings, provider, request.tools.length > 0));
  // The spec's own structured-output field: each provider maps it (OpenAI json_schema, Anthropic,
  // Google responseSchema); the engine checks every answer and repairs what slips, as for the others.
  if (request.output) options.responseFormat = { type: 'json', schema: wireSchema(request.output.schema), name: request.output.name };
  if (signal) options.abortSignal = signal;
  return options;
}

const count = z.number().int().nonnegative();

/** V2 counts tokens as numbers; V3 as `{ total, ... }` objects. Either may be undefined. */
const tokenCount = z.union([count, z.object({ total: count.nullish() })]).nullish();

const textPart = z.object({ type: z.literal('text'), text: z.string() });
const toolCallPart = z.object({
  type: z.literal('tool-call'),
  toolCallId: z.string(),
  toolName: z.string(),
  // A JSON string in both versions; an object is accepted from a hand-written model.
  input: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  providerExecuted: z.boolean().nullish(),
});

/** The fields of a `doGenerate` result Logbook reads (V2 and V3); anything else is ignored. */
export const aiSdkResultSchema = z.object({
  // Parts of other types (reasoning, sources, files, provider tool results) are not logged.
  content: z.array(z.looseObject({ type: z.string() })),
  // V2: a string. V3: `{ unified, raw }`.
  finishReason: z.union([z.string(), z.object({ unified: z.string(), raw: z.string().nullish() })]).nullish(),
  usage: z.object({ inputTokens: tokenCount, outputTokens: tokenCount }),
});

const FINISH_REASONS: Record<string, StopReason> = {
  stop: 'end_turn',
  'tool-calls': 'tool_use',
  length: 'max_tokens',
  'content-filter': 'content_filter',
};

function stopReason(finish: z.infer<typeof aiSdkResultSchema>['finishReason'], hasCalls: boolean): StopReason {
  const unified = typeof finish === 'string' ? finish : finish?.unified;
  const mapped = unified === undefined ? undefined : FINISH_REASONS[unified];
  // Some servers say `stop` with tool calls present: the calls decide, as on the other adapters.
  if (hasCalls && (mapped === undefined || mapped === 'end_turn')) return 'tool_use';
  return mapped ?? 'other';
}

function total(value: z.infer<typeof tokenCount>): number | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === 'number' ? value : (value.total ?? undefined);
}

/** A `doGenerate` result → ModelResponse; a result Logbook cannot read is model_invalid_response. */
export function fromAiSdkResult(result: unknown, provider: string): ModelResponse {
  const parsed = aiSdkResultSchema.safeParse(result);
  if (!parsed.success) {
    throw modelError(MODEL_ERROR.invalidResponse, `${provider}: unexpected doGenerate result: ${zodIssuesText(parsed.error)}`);
  }
  const { content, finishReason, usage } = parsed.data;
  const inputTokens = total(usage.inputTokens);
  const outputTokens = total(usage.outputTokens);
  // Budgets are enforced from usage: an answer without it cannot be charged, as on the other adapters.
  if (inputTokens === undefined || outputTokens === undefined) {
    throw modelError(MODEL_ERROR.invalidResponse, `${provider}: the result has no token usage (inputTokens and outputTokens totals)`);
  }
  let text = '';
  const calls: ModelResponseCall[] = [];
  for (const [i, raw] of content.entries()) {
    const invalid = (error: z.ZodError) =>
      modelError(MODEL_ERROR.invalidResponse, `${provider}: unexpected doGenerate result: ${zodIssuesText(error, { prefix: `content.${i}` })}`);
    if (raw.type === 'text') {
      const part = textPart.safeParse(raw);
      if (!part.success) throw invalid(part.error);
      text += part.data.text;
    } else if (raw.type === 'tool-call') {
      const part = toolCallPart.safeParse(raw);
      if (!part.success) throw invalid(part.error);
      // A tool the provider ran itself (a hosted web search) is not one of the agent's.
      if (part.data.providerExecuted) continue;
      const { args, argsError } = parseArguments(part.data.input);
      calls.push({ providerId: part.data.toolCallId, name: part.data.toolName, args, ...(argsError ? { argsError } : {}) });
    }
  }
  return { text, calls, usage: { inputTokens, outputTokens }, stopReason: stopReason(finishReason, calls.length > 0) };
}
