/**
 * `logbook/testing`: test an application's agents the way Logbook tests itself.
 * - runCrashHarness: run a scripted scenario uninterrupted, then crashed at every checkpoint, at
 *   pairs of checkpoints and frozen past its lease, and check the invariants that make a run
 *   durable; effectLog() is the ledger its fake services write to.
 * - toolTestContext: the context the engine hands one tool, with an abort the test triggers.
 * - checkReplay: will the agents about to be deployed still serve these recorded runs?
 * - runEval: what would another agent version do on these recorded runs? (served from the log, never executed)
 */
export {
  runCrashHarness,
  formatHarnessReport,
  type HarnessScenario,
  type HarnessOptions,
  type HarnessReport,
  type LateWake,
  type PausePoint,
  type PointReport,
} from './crash-harness.js';
export type { Baseline } from './harness-invariants.js';
export { BaselineParkedError, BaselineUnfinishedError, ResolverAnswerRefusedError, SideEffectShapeError, StaleWriteError } from './harness-errors.js';
export {
  effectLog,
  repeatedEffects,
  resolveFromEffects,
  type EffectLogOptions,
  type EffectRecorder,
  type RecordedEffect,
  type SideEffectRecord,
  type WriteStamp,
} from './side-effects.js';
export { driveRun, type DriveOptions, type DriveResult, type Outside, type Resolver } from './driver.js';
export { agentsWorld, memoryStorage, spawnWorker, guard, type World, type WorldStorage, type WorkerProcess } from './world.js';
export { scriptedWorld, type ScriptedWorldOptions } from './scripted-world.js';
export { uploadAttachment } from './attachments.js';
export { toolTestContext, type ToolTestContext, type ToolTestContextOptions, type ToolAbortReason } from './tool-context.js';
export { ToolAbort } from '../engine/tool-runner.js';
export {
  checkReplay,
  formatReplayReport,
  type ReplayCheckOptions,
  type ReplayReport,
  type RunVerdict,
  type StrandReason,
  type RecordedRun,
} from './replay-check.js';
export { ManualClock, SequentialIds, MemoryStore, MemoryBlobStore, MemoryStepQueue, MemoryAdmission } from '../adapters/memory/index.js';
export { WorkerHalt, type CheckpointName, type Checkpoints } from '../engine/checkpoints.js';
export { runEval, type RunEvalOptions } from './eval/run-eval.js';
export { EVAL_REPORT_FORMAT, EVAL_REPORT_VERSION, type EvalReport, type EvalRunResult, type EvalThreshold } from './eval/eval-report.js';
export type { EvalSide, EvalToolCall, EvalRunStatus } from './eval/eval-side.js';
export type { ServedCall } from './eval/served-tools.js';
export {
  defineScorer,
  builtInScorers,
  sameOutput,
  sameToolCalls,
  outputSchemaValid,
  costDelta,
  tokensDelta,
  type Scorer,
  type ScorerInput,
  type ScoreResult,
  type ScoreValue,
} from './eval/scorers.js';
export { parseRunFile, formatRunFile, exportedRunSchema, RUN_FILE_FORMAT, RUN_FILE_VERSION, type ExportedRun } from './eval/run-file.js';
export { exportRuns, importRuns, type RunStorage, type ImportOptions, type ImportResult } from './eval/run-transfer.js';
export { RunFileError, NotExecutedUnderEvalError } from './eval/eval-errors.js';
export {
  checkWorkflowReplay,
  checkWorkflowReplays,
  formatWorkflowReplayReport,
  type WorkflowReplayResult,
  type WorkflowReplayOptions,
  type WorkflowReplayCheckOptions,
  type WorkflowReplayReport,
  type WorkflowRunVerdict,
  type OpName,
} from './workflow-replay.js';
export {
  checkWorkflowDeterminism,
  formatDeterminismReport,
  type DeterminismOptions,
  type DeterminismReport,
  type DeterminismDivergence,
} from './workflow-determinism.js';
export { answerWaits, type WaitAnswers } from './workflow-outside.js';
