export { BedrockConverseClient, classifyBedrockError, type BedrockConverseOptions } from './bedrock-converse.js';
export { fromConverseOutput, toConverseInput, supportsToolResultStatus } from './bedrock-mapping.js';
export { OpenAiCompatibleClient, chatCompletionsUrl, classifyHttpError, type ApiKeyHeader, type OpenAiCompatibleOptions } from './openai-compatible.js';
export { fromChatCompletion, toChatCompletionsBody, parseArguments, type MaxTokensParam } from './openai-wire.js';
export { MODEL_ERROR, modelError, looksLikeContextLength, type ModelErrorCode } from './model-errors.js';
export { DEFAULT_RETRY, backoffMs, parseRetryAfter, withRetry, type RetryDeps, type RetryOptions } from './retry.js';
export { assignWireIds, type WireIds } from './wire-ids.js';
export { BUILT_IN_PRICES, PriceTable, UnknownModelPriceError, ZERO_PRICE, costUsd, defaultPrices, registerPrice, type Price } from './prices.js';
export {
  modelEnvSchema,
  modelsFromEnv,
  parseModelId,
  selectedModel,
  type ModelConfigOptions,
  type ModelEnv,
  type ModelProvider,
  type ModelSelection,
} from './model-config.js';
export { AiSdkModelClient, aiSdkModel, aiSdkModelId, classifyAiSdkError, type AiSdkLanguageModel, type AiSdkModelOptions } from './ai-sdk-model.js';
export { aiSdkResultSchema, fromAiSdkResult, toAiSdkCallOptions, type AiSdkCallOptions, type AiSdkMessage } from './ai-sdk-mapping.js';
