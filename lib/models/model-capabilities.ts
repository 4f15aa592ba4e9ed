import { attachmentKind, type AttachmentMediaType } from '../core/attachments.js';
import type { ModelSettings } from '../core/model-settings.js';
import { unhandled } from '../core/unhandled.js';
import { aiSdkSettingsProblems, parseAiSdkModelId } from './ai-sdk-settings.js';
import { parseModelId } from './model-selection.js';

/**
 * Which model settings each built-in provider has a switch for, by the model id's prefix. An agent
 * that sets one its model lacks is refused when it is defined (defineAgent throws ConfigError
 * naming the setting): a setting silently dropped would make a run behave unlike its pin says.
 *
 * - `scripted`: every setting (the scripted model records them, so tests can assert them).
 * - `bedrock:` (Converse): temperature, topP, stopSequences (`inferenceConfig`); toolChoice auto,
 *   required (`any`) or a named tool; Converse has no `none` and no parallel-tool-calls switch. A
 *   thinking budget (`reasoning.budgetTokens`) only for Claude models that think (3.7, 4 and later),
 *   and then, as Anthropic requires, without temperature, topP or a forced tool choice, with a
 *   budget below maxOutputTokens, and on an agent without tools (Claude wants its thinking blocks
 *   back with tool results, and the log does not keep them).
 * - `openai:` (Chat Completions): every sampling field and tool choice, `parallel_tool_calls`, and
 *   `reasoning_effort` for reasoning models only (o-series, gpt-5, gpt-oss); the o-series take no
 *   temperature or topP.
 * - `aisdk:<provider>/<model>` (aiSdkModel): temperature, topP, stopSequences and toolChoice are
 *   fields of the AI SDK call options; parallelToolCalls and reasoning go in its providerOptions,
 *   by provider family (lib/models/ai-sdk-settings.ts), and are refused for a family that has no
 *   such option (Google has no parallel-tool-calls switch; Anthropic and Google take a thinking
 *   budget, OpenAI an effort).
 * - any other id (a client the application supplies through defineAgents' `models`): every
 *   setting; the client receives them in `ModelRequest.settings` and is responsible for them.
 */

/** Top-level Chat Completions fields Logbook writes itself: providerOptions may not replace them. */
const OPENAI_OWN_FIELDS = [
  'model',
  'messages',
  'tools',
  'stream',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'tool_choice',
  'parallel_tool_calls',
  'reasoning_effort',
];

const CLAUDE_THINKING = /(^|[.:/])anthropic\.claude-(3-7-|(sonnet|opus|haiku)-[4-9])/;
const OPENAI_REASONING = /^(o\d|gpt-5|gpt-oss)/;
const OPENAI_O_SERIES = /^o\d/;

/** Every problem with `settings` for `modelId`, as `<setting>: <why>`; empty when all are supported. */
export function modelSettingsProblems(modelId: string, settings: ModelSettings, context: { tools: number; maxOutputTokens: number }): string[] {
  const parsed = parseModelId(modelId);
  const problems: string[] = [];
  const refuse = (setting: string, why: string) => problems.push(`${setting}: ${why}`);
  if (settings.toolChoice !== undefined && typeof settings.toolChoice === 'object' && settings.toolChoice.tool.trim() === '')
    refuse('toolChoice', 'names no tool');
  const aiSdk = parseAiSdkModelId(modelId);
  if (aiSdk) return [...problems, ...aiSdkSettingsProblems(aiSdk.provider, aiSdk.modelId, settings)];
  if (!parsed || parsed.provider === 'scripted') return problems;
  const name = parsed.name;
  if (parsed.provider === 'bedrock') {
    if (settings.parallelToolCalls !== undefined) refuse('parallelToolCalls', 'Bedrock Converse has no parallel tool calls switch');
    if (settings.toolChoice === 'none') refuse('toolChoice', 'Bedrock Converse has no "none" tool choice (give the agent no tools instead)');
    if (settings.reasoning !== undefined) {
      if (!CLAUDE_THINKING.test(name)) refuse('reasoning', `${name} has no reasoning setting on Bedrock (Claude 3.7 and 4+ take a thinking budget)`);
      else if ('effort' in settings.reasoning) refuse('reasoning', 'Claude on Bedrock takes a thinking budget ({ budgetTokens }), not an effort');
      else {
        if (settings.temperature !== undefined) refuse('temperature', 'Claude does not take a temperature while thinking');
        if (settings.topP !== undefined) refuse('topP', 'Claude does not take topP while thinking');
        if (settings.toolChoice !== undefined && settings.toolChoice !== 'auto') refuse('toolChoice', 'Claude only takes toolChoice auto while thinking');
        if (settings.providerOptions?.thinking !== undefined) refuse('providerOptions.thinking', 'set by reasoning.budgetTokens');
        if (context.tools > 0) {
          refuse(
            'reasoning',
            "Claude's thinking blocks must go back with tool results, and Logbook's log does not keep them yet: use it on an agent without tools",
          );
        }
        if (settings.reasoning.budgetTokens >= context.maxOutputTokens)
          refuse('reasoning', `budgetTokens must be below maxOutputTokens (${context.maxOutputTokens})`);
      }
    }
    return problems;
  }
  if (parsed.provider !== 'openai') return unhandled(parsed.provider, 'model provider');
  if (settings.reasoning !== undefined) {
    if (!OPENAI_REASONING.test(name)) refuse('reasoning', `${name} is not a reasoning model (o-series, gpt-5, gpt-oss take an effort)`);
    else if ('budgetTokens' in settings.reasoning) refuse('reasoning', 'OpenAI reasoning models take an effort ({ effort }), not a token budget');
  }
  if (OPENAI_O_SERIES.test(name)) {
    if (settings.temperature !== undefined) refuse('temperature', `${name} takes no temperature`);
    if (settings.topP !== undefined) refuse('topP', `${name} takes no topP`);
  }
  for (const key of Object.keys(settings.providerOptions ?? {})) {
    if (OPENAI_OWN_FIELDS.includes(key)) refuse(`providerOptions.${key}`, 'Logbook sets this field itself (use the named setting)');
  }
  return problems;
}

/** Bedrock models whose Converse API takes image and document blocks (Claude 3+, Nova Lite/Pro/Premier, Llama 3.2 vision and 4, Pixtral). */
const BEDROCK_MULTIMODAL =
  /(^|[.:/])(anthropic\.claude-(3|(sonnet|opus|haiku)-[4-9])|amazon\.nova-(lite|pro|premier)|meta\.llama(3-2-(11|90)b|4)|mistral\.pixtral)/;
/** OpenAI-compatible models that take image_url parts (and PDFs as file parts): OpenAI's vision models and the usual open ones. */
const OPENAI_VISION = /^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-4-turbo|gpt-5|o1(?!-mini)|o3(?!-mini)|o4)|llava|vision|pixtral|[-_.]vl\b|qwen2\.5vl|gemma3/i;

/**
 * Why `modelId` cannot take an attachment of `mediaType` (undefined: it can). Checked when a run
 * starts or a message arrives with attachments, so a model that cannot see them is refused there,
 * never sent a request with the attachment silently left out.
 *
 * - `scripted` and ids of clients the application supplies: everything (the client gets the parts).
 * - `bedrock:`: image and document blocks for the families in BEDROCK_MULTIMODAL.
 * - `openai:`: images and PDFs for vision models (OPENAI_VISION); txt, csv, md and html go to any
 *   model as text parts; docx to none (the chat API has no part for it).
 */
export function attachmentProblem(modelId: string, mediaType: AttachmentMediaType): string | undefined {
  const parsed = parseModelId(modelId);
  if (!parsed || parsed.provider === 'scripted') return undefined;
  const kind = attachmentKind(mediaType);
  const what = kind === 'image' ? `images (${mediaType})` : `${mediaType} documents`;
  if (parsed.provider === 'bedrock') {
    return BEDROCK_MULTIMODAL.test(parsed.name) ? undefined : `model ${modelId} does not take ${what} on Bedrock Converse`;
  }
  if (parsed.provider !== 'openai') return unhandled(parsed.provider, 'model provider');
  if (mediaType.startsWith('text/')) return undefined;
  if (mediaType === 'application/vnd.openxmlformats-officedocument.wordprocessingml.document') {
    return `model ${modelId}: the OpenAI chat API takes no docx documents (send a PDF or text)`;
  }
  return OPENAI_VISION.test(parsed.name) ? undefined : `model ${modelId} does not take ${what} (not a known vision model)`;
}
