/**
 * `logbook/testing`: test an application's agents the way Logbook tests itself. The crash
 * harness runs a scripted scenario uninterrupted, then crashed at every checkpoint, at pairs of
 * checkpoints and frozen past its lease, and checks the invariants that make a run durable.
 */
export {
  runCrashHarness,
  repeatedEffects,
  type HarnessScenario,
  type HarnessOptions,
  type HarnessReport,
  type PointReport,
  type SideEffectRecord,
} from './crash-harness.js';
export { driveRun, type DriveOptions, type DriveResult, type Outside, type Resolver } from './driver.js';
export { memoryStorage, spawnWorker, guard, type World, type WorldStorage, type WorkerProcess } from './world.js';
export { scriptedWorld, type ScriptedWorldOptions } from './scripted-world.js';
export { toolTestContext, type ToolTestContext, type ToolTestContextOptions } from './tool-context.js';
export { ManualClock, SequentialIds, MemoryStore, MemoryBlobStore, MemoryStepQueue } from '../adapters/memory/index.js';
export { WorkerHalt, type CheckpointName, type Checkpoints } from '../engine/checkpoints.js';
