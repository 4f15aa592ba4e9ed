/**
 * `logbook/engine`: the engine's hosting API, for hosts other than the Lambda handlers (tests,
 * custom runtimes, a container worker). Build an engine over ports, start runs, run steps, sweep,
 * and send the control requests the HTTP API sends. Agent authors need none of this: `logbook`.
 */
export { createEngine, type EngineDeps, type EnginePorts, type EngineOptions } from './engine.js';
export { startRun, type StartRunRequest } from './start-run.js';
export { runStep, type StepOptions, type StepResult } from './step-runner.js';
export { sweep } from './sweep.js';
export { requestCancel, requestResolution, requestRunAction, type Resolution } from './requests.js';
export { requestApproval, requestSignal, requestMessage, type ApprovalRequest } from './control-requests.js';
export { forkRun, type ForkRequest, type ForkResult } from './fork.js';
export { admitRun, type AdmissionPath } from './admission-gate.js';
export { ApprovalConflictError, CallNotFoundError, ForkConflictError, MessageConflictError, RunEndedError, SignalConflictError } from './control-errors.js';
export { childRunId } from './child-runs.js';
export { AgentRegistry } from '../authoring/registry.js';
export { resolveAgents, isAgents } from '../authoring/define-agents.js';
export type { RunHead, OpenAttention, OpenWait } from '../ports/run-heads.js';
export type { RunState, CallState, RunStatusState } from '../core/state.js';
export { otelTracer, LogbookIdGenerator, type OtelTracerOptions } from './tracing/otel-tracer.js';
export { otlpTracing, type OtlpTracing, type OtlpTracingOptions, type OtlpProtocol } from './tracing/otlp-setup.js';
export type { EngineTracer } from './tracing/engine-tracer.js';
export { traceIdOf, rootSpanIdOf, type TraceSpan } from './tracing/trace-span.js';
