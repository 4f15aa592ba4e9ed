import type { ContentBlock, ConverseCommandInput, ConverseCommandOutput, DocumentFormat, ImageFormat, Message, Tool } from '@aws-sdk/client-bedrock-runtime';
import { ATTACHMENT_TYPES } from '../core/attachments.js';
import type { JsonValue } from '../core/json.js';
import type { ModelAttachment, ModelRequest, ModelResponse, ModelResponseCall, StopReason } from '../core/messages.js';
import { MODEL_ERROR, modelError } from './model-errors.js';
import { assignWireIds } from './wire-ids.js';
import { wireSchema } from './wire-schema.js';

export interface ConverseMappingOptions {
  /**
   * Send `status: "error"` on failed tool results. Bedrock documents the field for Amazon Nova and
   * Anthropic Claude only; for other models the error is stated in the result text instead.
   */
  toolResultStatus: boolean;
}

/** Whether the model id names a model family that accepts toolResult.status. */
export function supportsToolResultStatus(modelId: string): boolean {
  return /(^|[.:/])(anthropic|amazon)\.(claude|nova)/.test(modelId);
}

/** Bedrock rejects blank text blocks; a placeholder keeps the turn structure valid. */
function nonBlank(text: string, placeholder: string): string {
  return text.trim() === '' ? placeholder : text;
}

/**
 * An attachment as a Converse block, its bytes raw (the SDK base64-encodes them). A document needs
 * a name of letters, digits, single spaces, hyphens, parentheses and brackets, unique in the
 * request: the uploaded name so cleaned, with the start of its sha256 (a message holds each
 * sha256 once).
 */
export function attachmentBlock(a: ModelAttachment): ContentBlock {
  const bytes = Buffer.from(a.data, 'base64');
  const format = ATTACHMENT_TYPES[a.mediaType].format;
  if (a.kind === 'image') return { image: { format: format as ImageFormat, source: { bytes } } };
  const base = (a.name ?? '')
    .replace(/\.[A-Za-z0-9]{1,5}$/, '')
    .replace(/[^A-Za-z0-9\s\-()[\]]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return { document: { format: format as DocumentFormat, name: `${base || 'document'} (${a.sha256.slice(0, 8)})`, source: { bytes } } };
}

/**
 * Builds the Converse request. Consecutive messages of one role are merged into one message
 * (Converse requires user/assistant alternation, and all results of one turn in one user message).
 */
export function toConverseInput(modelId: string, request: ModelRequest, options: ConverseMappingOptions): ConverseCommandInput {
  const wireId = assignWireIds(request.messages);
  const messages: Message[] = [];
  const push = (role: 'user' | 'assistant', blocks: ContentBlock[]) => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    if (last?.role === role && last.content) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };

  for (const m of request.messages) {
    if (m.role === 'user') {
      push('user', [{ text: nonBlank(m.content, '(empty message)') }, ...(m.attachments ?? []).map(attachmentBlock)]);
    } else if (m.role === 'assistant') {
      const blocks: ContentBlock[] = [];
      if (m.text.trim() !== '') blocks.push({ text: m.text });
      for (const c of m.calls) {
        blocks.push({ toolUse: { toolUseId: wireId(c.callId, c.providerId), name: c.name, input: c.args } });
      }
      push('assistant', blocks);
    } else {
      const content = nonBlank(m.content, '(no output)');
      const withStatus = options.toolResultStatus;
      push('user', [
        {
          toolResult: {
            toolUseId: wireId(m.callId, m.providerId),
            content: [{ text: m.isError && !withStatus ? `Error: ${content}` : content }],
            ...(m.isError && withStatus ? { status: 'error' as const } : {}),
          },
        },
      ]);
    }
  }

  const settings = request.settings ?? {};
  const input: ConverseCommandInput = {
    modelId,
    messages,
    inferenceConfig: {
      maxTokens: request.maxOutputTokens,
      ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
      ...(settings.topP !== undefined ? { topP: settings.topP } : {}),
      ...(settings.stopSequences ? { stopSequences: [...settings.stopSequences] } : {}),
    },
  };
  const additional = additionalFields(request);
  if (additional) input.additionalModelRequestFields = additional as never;
  if (request.system.trim() !== '') input.system = [{ text: request.system }];
  if (request.tools.length > 0) {
    const tools: Tool[] = request.tools.map((t) => ({
      toolSpec: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        inputSchema: { json: wireSchema(t.inputSchema) as never },
      },
    }));
    input.toolConfig = { tools };
    const choice = settings.toolChoice;
    // `none` never gets here: Converse has no such choice and defineAgent refuses it for Bedrock.
    if (choice === 'auto') input.toolConfig.toolChoice = { auto: {} };
    else if (choice === 'required') input.toolConfig.toolChoice = { any: {} };
    else if (typeof choice === 'object') input.toolConfig.toolChoice = { tool: { name: choice.tool } };
  }
  // Converse's own structured output (outputConfig.textFormat, a JSON Schema as a string): the
  // answer stays text, tools stay callable; the engine still checks the answer and repairs.
  if (request.output) {
    input.outputConfig = {
      textFormat: {
        type: 'json_schema',
        structure: { jsonSchema: { name: request.output.name, schema: JSON.stringify(wireSchema(request.output.schema)) } },
      },
    };
  }
  return input;
}

/** The model-specific fields: Claude's thinking budget, then the agent's provider options. */
function additionalFields(request: ModelRequest): Record<string, unknown> | undefined {
  const settings = request.settings;
  if (!settings) return undefined;
  const out: Record<string, unknown> = { ...settings.providerOptions };
  const reasoning = settings.reasoning;
  if (reasoning && 'budgetTokens' in reasoning) out.thinking = { type: 'enabled', budget_tokens: reasoning.budgetTokens };
  return Object.keys(out).length > 0 ? out : undefined;
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'end_turn',
  stop_sequence: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  // The output was cut because the context window filled up: the same situation as max_tokens.
  model_context_window_exceeded: 'max_tokens',
  content_filtered: 'content_filter',
  guardrail_intervened: 'content_filter',
};

export function mapConverseStopReason(reason: string | undefined, hasCalls: boolean): StopReason {
  const mapped = reason === undefined ? undefined : STOP_REASONS[reason];
  if (mapped) return mapped;
  return hasCalls ? 'tool_use' : 'other';
}

export function fromConverseOutput(output: ConverseCommandOutput): ModelResponse {
  const message = output.output && 'message' in output.output ? output.output.message : undefined;
  if (!message?.content) {
    throw modelError(MODEL_ERROR.invalidResponse, 'bedrock: Converse response has no output message');
  }
  const u = output.usage;
  if (u?.inputTokens === undefined || u.outputTokens === undefined) {
    throw modelError(MODEL_ERROR.invalidResponse, 'bedrock: Converse response has no token usage');
  }
  const texts: string[] = [];
  const calls: ModelResponseCall[] = [];
  for (const block of message.content) {
    if (block.text !== undefined) texts.push(block.text);
    else if (block.toolUse) {
      calls.push({
        providerId: block.toolUse.toolUseId ?? '',
        name: block.toolUse.name ?? '',
        args: (block.toolUse.input ?? {}) as JsonValue,
      });
    }
    // reasoningContent, citations and other block kinds are not part of the neutral format.
  }
  return {
    text: texts.join('\n'),
    calls,
    // Prompt-cache reads and writes are input too; counting them at the input price over-states
    // cost slightly, which is the safe side for budgets.
    usage: {
      inputTokens: u.inputTokens + (u.cacheReadInputTokens ?? 0) + (u.cacheWriteInputTokens ?? 0),
      outputTokens: u.outputTokens,
    },
    stopReason: mapConverseStopReason(output.stopReason, calls.length > 0),
  };
}
