import type { JsonValue } from '../core/json.js';
import type { ModelSettings } from '../core/model-settings.js';

/**
 * An agent's pinned model settings as AI SDK call options (LanguageModelV2/V3 `doGenerate`).
 *
 * The specification has fields for temperature, topP, stopSequences and toolChoice; everything
 * else goes in `providerOptions` under the key every AI SDK provider reads its own options from:
 * the first segment of the model's `provider` (`openai.chat` → `openai`, `anthropic.messages` →
 * `anthropic`, `my-gateway.chat` → `my-gateway`). What a setting becomes there depends on the
 * provider family, because the specification names no parallel-tool-calls or reasoning switch:
 *
 * | family | parallelToolCalls | reasoning |
 * |---|---|---|
 * | `openai` | `parallelToolCalls` | `{ effort }` → `reasoningEffort` |
 * | `anthropic` | `disableParallelToolUse` (the inverse) | `{ budgetTokens }` → `thinking: { type: 'enabled', budgetTokens }` |
 * | `google`, `vertex` | refused (no switch) | `{ budgetTokens }` → `thinkingConfig: { thinkingBudget }` |
 * | `mistral` | `parallelToolCalls` | refused |
 * | any other (OpenAI-compatible providers) | `parallel_tool_calls` (sent in the body as given) | `{ effort }` → `reasoningEffort` |
 *
 * `providerOptions` of the settings is that provider's own options object, sent as given under the
 * same key; a key that one of the named settings writes is refused when the agent is defined.
 */

export type AiSdkFamily = 'openai' | 'anthropic' | 'google' | 'mistral' | 'openai-compatible';

/** The `providerOptions` key a provider reads: `openai.chat` → `openai`. */
export function providerOptionsKey(provider: string): string {
  return provider.split('.')[0]?.trim() ?? provider;
}

export function aiSdkFamily(provider: string): AiSdkFamily {
  const key = providerOptionsKey(provider);
  if (key === 'openai' || key === 'azure') return 'openai';
  if (key === 'anthropic') return 'anthropic';
  if (key === 'google' || key === 'vertex') return 'google';
  if (key === 'mistral') return 'mistral';
  return 'openai-compatible';
}

/** The provider option each family's parallel-tool-calls and reasoning settings are written to. */
const OWN_KEYS: Record<AiSdkFamily, { parallel?: string; reasoning?: string }> = {
  openai: { parallel: 'parallelToolCalls', reasoning: 'reasoningEffort' },
  anthropic: { parallel: 'disableParallelToolUse', reasoning: 'thinking' },
  google: { reasoning: 'thinkingConfig' },
  mistral: { parallel: 'parallelToolCalls' },
  'openai-compatible': { parallel: 'parallel_tool_calls', reasoning: 'reasoningEffort' },
};

const OPENAI_O_SERIES = /^o\d/;

/** `aisdk:<provider>/<modelId>` → its parts (aiSdkModelId in ai-sdk-model.ts writes it). */
export function parseAiSdkModelId(id: string): { provider: string; modelId: string } | undefined {
  const match = /^aisdk:([^/\s]+)\/(\S+)$/.exec(id);
  return match ? { provider: match[1] as string, modelId: match[2] as string } : undefined;
}

/** Every setting the family has no switch for, as `<setting>: <why>` (model-capabilities.ts). */
export function aiSdkSettingsProblems(provider: string, modelId: string, settings: ModelSettings): string[] {
  const family = aiSdkFamily(provider);
  const own = OWN_KEYS[family];
  const problems: string[] = [];
  const refuse = (setting: string, why: string) => problems.push(`${setting}: ${why}`);
  if (settings.parallelToolCalls !== undefined && own.parallel === undefined) {
    refuse('parallelToolCalls', `the AI SDK ${providerOptionsKey(provider)} provider has no parallel tool calls switch`);
  }
  const reasoning = settings.reasoning;
  if (reasoning !== undefined) {
    const takesBudget = family === 'anthropic' || family === 'google';
    if (own.reasoning === undefined) refuse('reasoning', `the AI SDK ${providerOptionsKey(provider)} provider takes no reasoning setting from Logbook`);
    else if (takesBudget && 'effort' in reasoning)
      refuse('reasoning', `${providerOptionsKey(provider)} models take a thinking budget ({ budgetTokens }), not an effort`);
    else if (!takesBudget && 'budgetTokens' in reasoning)
      refuse('reasoning', `${providerOptionsKey(provider)} models take an effort ({ effort }), not a token budget`);
  }
  if (family === 'openai' && OPENAI_O_SERIES.test(modelId)) {
    if (settings.temperature !== undefined) refuse('temperature', `${modelId} takes no temperature`);
    if (settings.topP !== undefined) refuse('topP', `${modelId} takes no topP`);
  }
  for (const key of Object.keys(settings.providerOptions ?? {})) {
    if (key === own.parallel || key === own.reasoning) refuse(`providerOptions.${key}`, 'Logbook sets this option itself (use the named setting)');
  }
  return problems;
}

/** The call options the settings set: the specification's own fields, then providerOptions. */
export interface AiSdkSettingOptions {
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
  toolChoice?: { type: 'auto' | 'none' | 'required' } | { type: 'tool'; toolName: string };
  providerOptions?: Record<string, Record<string, JsonValue>>;
}

/** ModelRequest.settings → the call options for a model of `provider`; `hasTools`: a tool choice only goes with tools. */
export function aiSdkSettingOptions(settings: ModelSettings | undefined, provider: string, hasTools: boolean): AiSdkSettingOptions {
  if (settings === undefined) return {};
  const options: AiSdkSettingOptions = {};
  if (settings.temperature !== undefined) options.temperature = settings.temperature;
  if (settings.topP !== undefined) options.topP = settings.topP;
  if (settings.stopSequences !== undefined) options.stopSequences = [...settings.stopSequences];
  const choice = settings.toolChoice;
  if (hasTools && choice !== undefined) options.toolChoice = typeof choice === 'string' ? { type: choice } : { type: 'tool', toolName: choice.tool };
  const family = aiSdkFamily(provider);
  const own: Record<string, JsonValue> = { ...settings.providerOptions };
  if (settings.parallelToolCalls !== undefined) {
    if (family === 'anthropic') own.disableParallelToolUse = !settings.parallelToolCalls;
    else if (family !== 'google') own[OWN_KEYS[family].parallel as string] = settings.parallelToolCalls;
  }
  const reasoning = settings.reasoning;
  if (reasoning !== undefined) {
    if ('effort' in reasoning) own.reasoningEffort = reasoning.effort;
    else if (family === 'anthropic') own.thinking = { type: 'enabled', budgetTokens: reasoning.budgetTokens };
    else if (family === 'google') own.thinkingConfig = { thinkingBudget: reasoning.budgetTokens };
  }
  if (Object.keys(own).length > 0) options.providerOptions = { [providerOptionsKey(provider)]: own };
  return options;
}
