import { z } from 'zod';
import type { JsonValue } from '../core/json.js';
import type { ModelAttachment, ModelRequest, ModelResponse, ModelResponseCall, StopReason } from '../core/messages.js';
import { zodIssuesText } from '../core/zod-issues.js';
import { MODEL_ERROR, modelError } from './model-errors.js';
import { assignWireIds } from './wire-ids.js';
import { wireSchema } from './wire-schema.js';

export type MaxTokensParam = 'max_tokens' | 'max_completion_tokens';

type WireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | WireUserPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** Chat Completions user content parts: text, an image as a data URL, a PDF as a file. */
export type WireUserPart =
  { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } } | { type: 'file'; file: { filename: string; file_data: string } };

/**
 * A user message with attachments as content parts. The chat API has image_url parts and file
 * parts (PDF only); a text document (txt, csv, md, html) is a text part that says what it is,
 * which is all a model reads of it anyway. A docx has no part: refused when the run starts
 * (model-capabilities.ts), and here too rather than dropped.
 */
export function userParts(content: string, attachments: readonly ModelAttachment[]): WireUserPart[] {
  const parts: WireUserPart[] = [{ type: 'text', text: content }];
  for (const a of attachments) {
    const label = a.name ?? a.sha256.slice(0, 12);
    if (a.kind === 'image') parts.push({ type: 'image_url', image_url: { url: `data:${a.mediaType};base64,${a.data}` } });
    else if (a.mediaType === 'application/pdf')
      parts.push({ type: 'file', file: { filename: a.name ?? `${label}.pdf`, file_data: `data:application/pdf;base64,${a.data}` } });
    else if (a.mediaType.startsWith('text/')) {
      parts.push({ type: 'text', text: `Attached document ${label} (${a.mediaType}):\n${Buffer.from(a.data, 'base64').toString('utf8')}` });
    } else throw modelError(MODEL_ERROR.badRequest, `the OpenAI chat API takes no ${a.mediaType} attachment (${label})`);
  }
  return parts;
}

interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * Arguments as they go back on the wire. A string can only be the raw text of arguments that did
 * not parse (tool inputs are JSON objects), so it is sent back verbatim, exactly as the model
 * wrote it; anything else is serialized.
 */
function wireArguments(args: JsonValue): string {
  return typeof args === 'string' ? args : JSON.stringify(args);
}

/** Results carry no error flag on this wire; say it in the text unless the text already does. */
function toolResultText(content: string, isError: boolean): string {
  if (!isError || /^\s*error\b/i.test(content)) return content;
  return `Error: ${content}`;
}

export function toChatCompletionsBody(model: string, request: ModelRequest, maxTokensParam: MaxTokensParam): Record<string, unknown> {
  const wireId = assignWireIds(request.messages);
  const messages: WireMessage[] = [];
  if (request.system !== '') messages.push({ role: 'system', content: request.system });
  for (const m of request.messages) {
    if (m.role === 'user') messages.push({ role: 'user', content: m.attachments ? userParts(m.content, m.attachments) : m.content });
    else if (m.role === 'assistant') {
      if (m.calls.length === 0) messages.push({ role: 'assistant', content: m.text });
      else {
        messages.push({
          role: 'assistant',
          content: m.text === '' ? null : m.text,
          tool_calls: m.calls.map((c) => ({
            id: wireId(c.callId, c.providerId),
            type: 'function',
            function: { name: c.name, arguments: wireArguments(c.args) },
          })),
        });
      }
    } else {
      messages.push({
        role: 'tool',
        tool_call_id: wireId(m.callId, m.providerId),
        content: toolResultText(m.content, m.isError),
      });
    }
  }
  const settings = request.settings ?? {};
  // Provider options first: every field Logbook names below wins (defineAgent refuses the overlap anyway).
  const body: Record<string, unknown> = { ...settings.providerOptions, model, messages, [maxTokensParam]: request.maxOutputTokens, stream: false };
  if (settings.temperature !== undefined) body.temperature = settings.temperature;
  if (settings.topP !== undefined) body.top_p = settings.topP;
  if (settings.stopSequences) body.stop = [...settings.stopSequences];
  if (settings.reasoning && 'effort' in settings.reasoning) body.reasoning_effort = settings.reasoning.effort;
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: wireSchema(t.inputSchema) },
    }));
    // Both fields are refused by the API without tools, so they go only with them.
    const choice = settings.toolChoice;
    if (choice !== undefined) body.tool_choice = typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.tool } };
    if (settings.parallelToolCalls !== undefined) body.parallel_tool_calls = settings.parallelToolCalls;
  }
  // Structured output as a response format, not a forced tool: the model may still call tools
  // before it answers, and its answer is text as for any agent. Not `strict`: strict mode refuses
  // schemas with optional properties; the engine checks every answer and repairs what slips.
  if (request.output) {
    body.response_format = {
      type: 'json_schema',
      json_schema: { name: request.output.name, schema: wireSchema(request.output.schema), strict: false },
    };
  }
  return body;
}

const toolCallSchema = z.object({
  id: z.string().nullish(),
  type: z.string().nullish(),
  function: z.object({
    name: z.string(),
    // A JSON string per the spec; a few servers send the object itself.
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  }),
});

/** Only the fields Logbook reads; everything else a server adds is ignored. */
export const chatCompletionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          refusal: z.string().nullish(),
          tool_calls: z.array(toolCallSchema).nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z.object({
    prompt_tokens: z.number().int().nonnegative(),
    completion_tokens: z.number().int().nonnegative(),
  }),
});

const FINISH_REASONS: Record<string, StopReason> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'content_filter',
};

/** Ollama and some vLLM parsers report `stop` with tool calls present: the calls decide. */
export function mapFinishReason(reason: string | null | undefined, hasCalls: boolean): StopReason {
  const mapped = reason ? FINISH_REASONS[reason] : undefined;
  if (mapped === 'end_turn' && hasCalls) return 'tool_use';
  return mapped ?? (hasCalls ? 'tool_use' : 'other');
}

/** Parses one call's arguments; text that is not JSON is kept raw with argsError set. */
export function parseArguments(raw: string | Record<string, unknown> | null | undefined): {
  args: JsonValue;
  argsError?: string;
} {
  if (raw === null || raw === undefined) return { args: {} };
  if (typeof raw !== 'string') return { args: raw as JsonValue };
  // Some servers send "" for a call without parameters.
  if (raw.trim() === '') return { args: {} };
  try {
    return { args: JSON.parse(raw) as JsonValue };
  } catch (error) {
    return { args: raw, argsError: `arguments are not valid JSON: ${(error as Error).message}` };
  }
}

export function fromChatCompletion(json: unknown): ModelResponse {
  const parsed = chatCompletionSchema.safeParse(json);
  if (!parsed.success) {
    throw modelError(MODEL_ERROR.invalidResponse, `openai-compatible: unexpected response shape: ${zodIssuesText(parsed.error)}`);
  }
  const { choices, usage } = parsed.data;
  const [choice] = choices;
  if (!choice) throw modelError(MODEL_ERROR.invalidResponse, 'openai-compatible: response has no choices');
  const calls: ModelResponseCall[] = (choice.message.tool_calls ?? []).map((c) => {
    const { args, argsError } = parseArguments(c.function.arguments);
    return { providerId: c.id ?? '', name: c.function.name, args, ...(argsError ? { argsError } : {}) };
  });
  return {
    text: choice.message.content ?? choice.message.refusal ?? '',
    calls,
    usage: { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens },
    stopReason: mapFinishReason(choice.finish_reason, calls.length > 0),
  };
}
