/**
 * `logbook`: what an application's agents module imports. Define tools (each with its policy for a
 * call that started and has no result), define agents that pin a model, a system prompt and those
 * tools, and export them with `defineAgents`. Importing this module has no side effects, and it
 * imports nothing of the engine's run-time: hosting the engine is `logbook/engine` (and
 * `logbook/lambda` on AWS).
 */
export { defineTool } from './authoring/define-tool.js';
export { defineAgent, toolSchemaHash } from './authoring/define-agent.js';
export { defineAgents, type Agents, type AgentsSource } from './authoring/define-agents.js';
export { waitForSignal, sleepTool, type WaitForSignalSpec, type SleepToolSpec } from './authoring/waits.js';
export { agentTool, type AgentToolSpec } from './authoring/agent-tool.js';
// Workflows: code around agents, its every operation recorded in the run's log and replayed from it.
export { defineWorkflow } from './authoring/define-workflow.js';
export type {
  WorkflowSpec,
  WorkflowDefinition,
  WorkflowContext,
  StepContext,
  StepOptions,
  StepRetry,
  StepVerifyOutcome,
  SignalResult,
  WaitForSignalOptions,
  ApprovalOptions,
  ApprovalOutcome,
  ChildRunOptions,
  MapOptions,
  Settled,
  WorkflowReturn,
  WorkflowInputOf,
  WorkflowOutputOf,
  AgentInputOf,
  AgentOutputOf,
} from './authoring/workflow-types.js';
export { StepFailedError, ChildRunFailedError, PartialFailureError, NonRetryableError, WorkflowUsageError } from './core/workflow-errors.js';
export type { ContextSpec } from './authoring/context-spec.js';
export type { AgentsSpec } from './authoring/agents-spec.js';
export type {
  ToolContext,
  ToolDefinition,
  ToolSpec,
  VerifyOutcome,
  ApprovalContext,
  ApprovalRule,
  JsonSchemaInput,
  AgentDefinition,
  AgentSpec,
  OutputSpec,
} from './authoring/types.js';
// Typed input, instructions built per run, model settings.
export type {
  InputSchema,
  RunInput,
  InstructionsFunction,
  InstructionsContext,
  AppContextLoader,
  AppContextRequest,
  JsonCompatible,
} from './authoring/types.js';
export { InstructionsError } from './authoring/instructions.js';
// Images and documents in a run's input: the field an input schema declares them with.
export { attachment, type AttachmentOptions, type AttachmentRef, type AttachmentMediaType } from './authoring/attachment.js';
export type { ModelSettings, ToolChoice, ReasoningSetting } from './core/model-settings.js';
export { DEFAULT_TOOL_TIMEOUT_MS, MAX_TOOL_TIMEOUT_MS } from './core/limits.js';
// Redaction: what the log, S3 payloads, the API and the model see of secrets (defineAgents({ redaction })).
export { Redactor, DEFAULT_REDACTION_RULES, FIELD_PLACEHOLDER, type RedactionOptions, type RedactionRule } from './core/redaction.js';
// Models: scripted ones for tests and `logbook dev`, prices, and how a model id is read.
export {
  LOCAL_SCRIPTED_PACE_MS,
  SCRIPTED_PACE_ENV,
  ScriptedModel,
  StaticModelResolver,
  type ScriptStep,
  type ScriptedTurn,
  type ScriptedModelOptions,
  type ScriptedPace,
} from './models/scripted-model.js';
export { registerPrice } from './models/prices.js';
export { selectedModel, parseModelId } from './models/model-selection.js';
// Any AI SDK language model (provider specification v2, v3...), duck-typed: no `ai` dependency.
export { aiSdkModel, aiSdkModelId, AiSdkModelClient, type AiSdkLanguageModel, type AiSdkModelOptions } from './models/ai-sdk-model.js';
export type { ModelClient, ModelResolver } from './ports/model-client.js';
export type { ModelRequest, ModelResponse, ModelMessage, ModelAttachment, ModelUsage, ModelToolSpec, ModelOutputSpec } from './core/messages.js';
// Tools from MCP servers (the SDK is loaded on first use, not by importing this module).
export { mcpTools, connectMcpServer, type McpServerTools, type McpTools } from './tools/mcp/mcp-tools.js';
export {
  MCP_META_KEYS,
  type McpToolsOptions,
  type McpTransport,
  type McpHttpTransport,
  type McpStdioTransport,
  type McpPolicyOverride,
  type McpCaller,
  type McpListedTool,
  type McpApprovalOptions,
} from './tools/mcp/options.js';
export { McpServerUnavailableError, McpToolError, McpRequestError, McpResultTooLargeError, McpConnectionClosedError } from './tools/mcp/errors.js';
// What tools and tests see of a run, and the errors they may catch.
export * from './core/errors.js';
export type { RunEvent, EventType, EventOf, Policy, Budgets, Price, PinnedTool, AttentionReason } from './core/events.js';
export type { BudgetRequest } from './core/budgets.js';
export type { RunState, CallState, RunStatusState } from './core/state.js';
export type { OpState, OpResult, WorkflowState } from './core/workflow-state.js';
export type { OpKind, OpWait } from './core/workflow-events.js';
export type { JsonValue } from './core/json.js';
export { idempotencyKey, type RunRef } from './core/run-ref.js';
