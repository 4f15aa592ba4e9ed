/** Logbook's public API for agent authors. */
export { defineAgent, AgentRegistry, type AgentDefinition, type AgentSpec } from './engine/agents.js';
export { defineTool, type ToolContext, type ToolDefinition, type ToolSpec, type VerifyOutcome } from './engine/tools.js';
export { createEngine, type EngineDeps, type EnginePorts, type EngineOptions } from './engine/engine.js';
export { startRun, type StartRunRequest } from './engine/start-run.js';
export { runStep, type StepResult } from './engine/step-runner.js';
export { requestCancel, requestResolution, requestRunAction } from './engine/requests.js';
export { sweep } from './engine/sweep.js';
export { ScriptedModel, StaticModelResolver } from './models/scripted-model.js';
export * from './core/errors.js';
export type { RunEvent, Policy, Budgets } from './core/events.js';
export type { RunState } from './core/state.js';
