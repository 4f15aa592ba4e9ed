import { MemoryBlobStore } from '../adapters/memory/memory-blob-store.js';
import { ManualClock, SequentialIds } from '../adapters/memory/manual-clock.js';
import { MemoryStepQueue } from '../adapters/memory/memory-step-queue.js';
import { MemoryStore } from '../adapters/memory/memory-store.js';
import type { Agents } from '../engine/agent-set.js';
import type { AgentRegistry } from '../engine/agents.js';
import type { Checkpoints } from '../engine/checkpoints.js';
import { WorkerHalt } from '../engine/checkpoints.js';
import { createEngine, type EngineDeps, type EngineOptions, type EnginePorts } from '../engine/engine.js';
import type { BlobStore } from '../ports/blob-store.js';
import type { EventLog } from '../ports/event-log.js';
import type { Inbox } from '../ports/inbox.js';
import type { ModelResolver } from '../ports/model-client.js';
import type { RunHeads } from '../ports/run-heads.js';
import type { StepQueue } from '../ports/step-queue.js';

/** Storage shared by every worker of a test: what survives a crash. */
export interface WorldStorage {
  log: EventLog;
  heads: RunHeads;
  inbox: Inbox;
  blobs: BlobStore;
  queue: StepQueue & { take(): { tick: { tenant: string; runId: string } } | undefined };
}

export interface World {
  storage: WorldStorage;
  clock: ManualClock;
  registry: AgentRegistry;
  models: ModelResolver;
}

export function memoryStorage(): WorldStorage & { store: MemoryStore; blobStore: MemoryBlobStore; stepQueue: MemoryStepQueue } {
  const store = new MemoryStore();
  const blobStore = new MemoryBlobStore();
  const stepQueue = new MemoryStepQueue();
  return { log: store, heads: store, inbox: store, blobs: blobStore, queue: stepQueue, store, blobStore, stepQueue };
}

/**
 * Wrap a port so that once `isDead()` is true every call fails as if the process were gone.
 * A killed worker's heartbeat must not renew, and its late calls must not land.
 */
export function guard<T extends object>(target: T, isDead: () => boolean, gate?: () => Promise<void> | undefined): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        // A frozen process makes no calls until it thaws; then they go out late.
        const frozen = gate?.();
        if (frozen) await frozen;
        if (isDead()) throw new WorkerHalt('dead process');
        return (value as (...a: unknown[]) => unknown).apply(obj, args);
      };
    },
  });
}

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

export function spawnWorker(world: World, checkpoints?: Checkpoints, options: EngineOptions = {}, ports?: Partial<EnginePorts>): WorkerProcess {
  let dead = false;
  const isDead = () => dead;
  let frozen: Promise<void> | undefined;
  const gate = () => frozen;
  const name = `worker-${++workerCounter}`;
  const s = world.storage;
  const deps = createEngine(
    {
      log: guard(s.log, isDead, gate),
      heads: guard(s.heads, isDead, gate),
      inbox: guard(s.inbox, isDead, gate),
      blobs: guard(s.blobs, isDead, gate),
      queue: guard(s.queue, isDead, gate),
      models: world.models,
      registry: world.registry,
      clock: world.clock,
      ids: new SequentialIds(name),
      ...ports,
    },
    { ...options, ...(checkpoints ? { checkpoints } : {}) },
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

/**
 * A world for an application's own agents (the value of defineAgents), on fresh memory storage
 * and a manual clock: models are the ones the application supplies (`models` in defineAgents).
 * Build the agents inside the scenario's world() so each point gets fresh fake services.
 */
export function agentsWorld(agents: Agents, storage: WorldStorage = memoryStorage()): World {
  return { storage, clock: new ManualClock(), registry: agents.registry, models: { resolve: (id) => agents.model(id) } };
}
