import { MemoryBlobStore } from '../adapters/memory/memory-blob-store.js';
import { ManualClock, SequentialIds } from '../adapters/memory/manual-clock.js';
import { MemoryStepQueue } from '../adapters/memory/memory-step-queue.js';
import { MemoryStore } from '../adapters/memory/memory-store.js';
import { MemoryRunStream } from '../adapters/memory/memory-run-stream.js';
import type { Agents } from '../authoring/define-agents.js';
import type { AgentRegistry } from '../authoring/registry.js';
import type { Checkpoints } from '../engine/checkpoints.js';
import { WorkerHalt } from '../engine/checkpoints.js';
import { createEngine, type EngineDeps, type EngineOptions, type EnginePorts } from '../engine/engine.js';
import type { RedactionOptions } from '../core/redaction.js';
import type { EngineTracer } from '../engine/tracing/engine-tracer.js';
import type { TraceSpan } from '../engine/tracing/trace-span.js';
import type { BlobStore } from '../ports/blob-store.js';
import type { EventLog } from '../ports/event-log.js';
import type { Inbox } from '../ports/inbox.js';
import type { ModelResolver } from '../ports/model-client.js';
import type { RunHeads } from '../ports/run-heads.js';
import type { StepQueue } from '../ports/step-queue.js';
import type { RunStream } from '../ports/run-stream.js';
import type { OutcomePublisher } from '../ports/outcome-publisher.js';
import { isWrite, RecordingPublisher, type WriteMutation, type WritePoints, type WritePort } from './write-points.js';

/** Storage shared by every worker of a test: what survives a crash. */
export interface WorldStorage {
  log: EventLog;
  heads: RunHeads;
  inbox: Inbox;
  blobs: BlobStore;
  queue: StepQueue & { take(): { tick: { tenant: string; runId: string } } | undefined };
  /** Outcome notices, when the world publishes them (memoryStorage() records them). */
  publisher?: OutcomePublisher & { notices?: readonly unknown[] };
  /**
   * Streamed model text, when the world streams (memoryStorage() does). Not a crash point: a chunk
   * is a preview, and a worker killed mid-stream leaves its partial text for readers to discard.
   */
  stream?: RunStream;
}

export interface World {
  storage: WorldStorage;
  clock: ManualClock;
  registry: AgentRegistry;
  models: ModelResolver;
  /** The application's redaction (defineAgents), applied by every worker of this world. */
  redaction?: RedactionOptions;
  /** Where every worker of this world sends its spans (tracing); a dead worker's are dropped. */
  tracer?: EngineTracer;
}

export function memoryStorage(): WorldStorage & { store: MemoryStore; blobStore: MemoryBlobStore; stepQueue: MemoryStepQueue; stream: MemoryRunStream } {
  const store = new MemoryStore();
  const blobStore = new MemoryBlobStore();
  const stepQueue = new MemoryStepQueue();
  const publisher = new RecordingPublisher();
  const stream = new MemoryRunStream();
  return { log: store, heads: store, inbox: store, blobs: blobStore, queue: stepQueue, publisher, stream, store, blobStore, stepQueue };
}

/**
 * Wrap a port so that once `isDead()` is true every call fails as if the process were gone.
 * A killed worker's heartbeat must not renew, and its late calls must not land.
 */
export function guard<T extends object>(target: T, isDead: () => boolean, gate?: () => Promise<void> | undefined, writes?: WriteHooks): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const call = () => (value as (...a: unknown[]) => unknown).bind(obj);
      return async (...args: unknown[]) => {
        // A frozen process makes no calls until it thaws; then they go out late.
        const frozen = gate?.();
        if (frozen) await frozen;
        if (isDead()) throw new WorkerHalt('dead process');
        if (writes && isWrite(writes.port, String(prop))) return writes.perform(`${writes.port}.${String(prop)}`, () => call()(...args), args);
        return call()(...args);
      };
    },
  });
}

/** How guard() passes one port's writes through the write points (and a mutation, in its check). */
export interface WriteHooks {
  port: WritePort;
  perform(label: string, write: () => unknown, args: unknown[]): Promise<unknown>;
}

/**
 * The write hooks of one process: before-write and after-write around every write, so a crash
 * can land on either side of it; a mutation skips a write or holds it back until the next one.
 */
function writeHooks(points: WritePoints | undefined, mutation: WriteMutation | undefined): (port: WritePort) => WriteHooks | undefined {
  if (!points && !mutation) return () => undefined;
  let held: { label: string; write: () => unknown } | undefined;
  const perform = async (label: string, write: () => unknown, args: unknown[]): Promise<unknown> => {
    await points?.write('before-write', label);
    const hit = mutation?.label === label && (mutation.match?.(args) ?? true);
    if (mutation?.kind === 'skip' && hit) return mutationResult(label);
    if (mutation?.kind === 'swap' && hit && !held) {
      held = { label, write };
      return mutationResult(label);
    }
    // A held write goes out right after its partner (swapped), or before any other write (as written).
    const late = held;
    held = undefined;
    if (late && mutation?.next !== label) await late.write();
    const result = await write();
    await points?.write('after-write', label);
    // Swapped: the held write goes out after its partner, so a crash can fall between the two.
    if (late && mutation?.next === label) await late.write();
    return result;
  };
  return (port) => ({ port, perform });
}

/** What a skipped or held-back write reports to its caller: that it went through. */
function mutationResult(label: string): unknown {
  return label === 'heads.releaseLease' ||
    label === 'heads.project' ||
    label === 'heads.projectAndRelease' ||
    label === 'heads.createHead' ||
    label === 'heads.setSnapshot'
    ? true
    : undefined;
}

/** The checkpoints of a harness process: the engine's, plus the write points of its ports. */
export type HarnessPoints = Checkpoints & Partial<WritePoints>;

/** A worker process: its own caches, its own nonce, and a kill switch. */
export interface WorkerProcess {
  deps: EngineDeps;
  kill(): void;
  /** Freeze every port call of this process until the returned thaw() is called. */
  freeze(): () => void;
  readonly dead: boolean;
  name: string;
}

let workerCounter = 0;

export function spawnWorker(
  world: World,
  checkpoints?: HarnessPoints,
  options: EngineOptions = {},
  ports?: Partial<EnginePorts>,
  mutation?: WriteMutation,
): WorkerProcess {
  let dead = false;
  const isDead = () => dead;
  let frozen: Promise<void> | undefined;
  const gate = () => frozen;
  const name = `worker-${++workerCounter}`;
  const s = world.storage;
  const hooks = writeHooks(checkpoints?.write ? (checkpoints as WritePoints) : undefined, mutation);
  const deps = createEngine(
    {
      log: guard(s.log, isDead, gate, hooks('log')),
      heads: guard(s.heads, isDead, gate, hooks('heads')),
      inbox: guard(s.inbox, isDead, gate, hooks('inbox')),
      blobs: guard(s.blobs, isDead, gate, hooks('blobs')),
      queue: guard(s.queue, isDead, gate, hooks('queue')),
      ...(s.publisher ? { publisher: guard(s.publisher, isDead, gate, hooks('publisher')) } : {}),
      ...(s.stream ? { stream: guard(s.stream, isDead, gate) } : {}),
      models: world.models,
      registry: world.registry,
      clock: world.clock,
      ids: new SequentialIds(name),
      ...(world.tracer ? { tracer: deadDrops(world.tracer, isDead) } : {}),
      ...ports,
    },
    {
      ...(world.redaction ? { redaction: world.redaction } : {}),
      ...options,
      // A manual clock does not move while a step runs: a workflow's short wait ends the step instead.
      config: { inProcessWaitMs: 0, ...options.config },
      ...(checkpoints ? { checkpoints } : {}),
    },
  );
  return {
    deps,
    name,
    kill: () => {
      dead = true;
    },
    freeze: () => {
      let thaw!: () => void;
      frozen = new Promise<void>((r) => (thaw = r));
      return () => {
        frozen = undefined;
        thaw();
      };
    },
    get dead() {
      return dead;
    },
  };
}

/** A process that died sends nothing more: its spans (and what it would count) after death are dropped, as its buffer would be. */
function deadDrops(tracer: EngineTracer, isDead: () => boolean): EngineTracer {
  return {
    ...(tracer.payloads ? { payloads: true } : {}),
    record: (spans) => (isDead() ? undefined : tracer.record(spans)),
    flush: () => (isDead() ? Promise.resolve() : tracer.flush()),
    ...(tracer.committed ? { committed: (spans: readonly TraceSpan[]) => (isDead() ? undefined : tracer.committed?.(spans)) } : {}),
  };
}

/**
 * A world for an application's own agents (the value of defineAgents), on fresh memory storage
 * and a manual clock: models are the ones the application supplies (`models` in defineAgents).
 * Build the agents inside the scenario's world() so each point gets fresh fake services.
 */
export function agentsWorld(agents: Agents, storage: WorldStorage = memoryStorage()): World {
  return {
    storage,
    clock: new ManualClock(),
    registry: agents.registry,
    models: { resolve: (id) => agents.model(id) },
    ...(agents.redaction ? { redaction: agents.redaction } : {}),
  };
}
