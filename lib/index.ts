/**
 * `logbook`: what an application's agents module imports. Define tools (each with its policy for a
 * call that started and has no result), define agents that pin a model, a system prompt and those
 * tools, and export them with `defineAgents`. Importing this module has no side effects.
 */
export { defineTool, type ToolContext, type ToolDefinition, type ToolSpec, type VerifyOutcome } from './engine/tools.js';
export { DEFAULT_TOOL_TIMEOUT_MS, MAX_TOOL_TIMEOUT_MS } from './engine/limits.js';
export { defineAgent, AgentRegistry, toolSchemaHash, type AgentDefinition, type AgentSpec } from './engine/agents.js';
export { waitForSignal, sleepTool, type WaitForSignalSpec, type SleepToolSpec } from './engine/waits.js';
export { agentTool, type AgentToolSpec } from './engine/agent-tool.js';
export { childRunId } from './engine/child-runs.js';
export type { ApprovalContext, ApprovalRule } from './engine/tools.js';
export { defineAgents, type Agents, type AgentsSpec, type AgentsSource } from './engine/agent-set.js';
export { Redactor, DEFAULT_REDACTION_RULES, FIELD_PLACEHOLDER, type RedactionOptions, type RedactionRule } from './engine/redaction.js';
export { ScriptedModel, StaticModelResolver, type ScriptStep, type ScriptedTurn } from './models/scripted-model.js';
export { registerPrice } from './models/prices.js';
export { selectedModel, parseModelId } from './models/model-selection.js';
export * from './core/errors.js';
export type { RunEvent, EventType, EventOf, Policy, Budgets, Price, PinnedTool, AttentionReason } from './core/events.js';
export type { BudgetRequest } from './core/budgets.js';
export type { RunState, CallState, RunStatusState } from './core/state.js';
export type { JsonValue } from './core/json.js';
export type { ModelRequest, ModelResponse, ModelMessage, ModelUsage, ModelToolSpec } from './core/messages.js';
export type { ModelClient, ModelResolver } from './ports/model-client.js';
export type { RunRef } from './ports/run-ref.js';
export type { RunHead, OpenAttention, OpenWait } from './ports/run-heads.js';
// The engine over ports, for hosts other than the Lambda handlers (tests, custom runtimes).
export { createEngine, type EngineDeps, type EnginePorts, type EngineOptions } from './engine/engine.js';
export { startRun, type StartRunRequest } from './engine/start-run.js';
export { runStep, type StepOptions, type StepResult } from './engine/step-runner.js';
export { requestCancel, requestResolution, requestRunAction, type Resolution } from './engine/requests.js';
export { requestApproval, requestSignal, requestMessage, type ApprovalRequest } from './engine/control-requests.js';
export { forkRun, type ForkRequest, type ForkResult } from './engine/fork.js';
export { ApprovalConflictError, CallNotFoundError, ForkConflictError, MessageConflictError, SignalConflictError } from './engine/control-errors.js';
export { sweep } from './engine/sweep.js';
// Tools from MCP servers (the SDK is loaded on first use, not by importing this module).
export type { JsonSchemaInput } from './engine/tools.js';
export { mcpTools, connectMcpServer, type McpServerTools } from './tools/mcp/mcp-tools.js';
export { MCP_META_KEYS, type McpToolsOptions, type McpTransport, type McpHttpTransport, type McpStdioTransport, type McpPolicyOverride, type McpCaller, type McpListedTool } from './tools/mcp/options.js';
export { McpServerUnavailableError, McpToolError, McpRequestError } from './tools/mcp/errors.js';
