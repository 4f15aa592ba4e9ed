// Every path that makes a run work goes through admission (lib/engine/admission-gate.ts), and every
// failure after it took a slot gives the slot back: a start that answers 409, a store error before
// or at the append, an instructions function that throws, a fork, a follow-up message reopening a
// completed run. A child run takes no slot (it runs under its parent's). The same engine paths on
// the memory fakes and on the DynamoDB adapters (dynalite, DynamoDB Local), with the fault injected
// in the port right after admission.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { MemoryAdmission } from '../../lib/adapters/memory/memory-admission.js';
import { MemoryBlobStore } from '../../lib/adapters/memory/memory-blob-store.js';
import { MemoryStepQueue } from '../../lib/adapters/memory/memory-step-queue.js';
import { MemoryStore } from '../../lib/adapters/memory/memory-store.js';
import { agentTool } from '../../lib/authoring/agent-tool.js';
import { defineAgent } from '../../lib/authoring/define-agent.js';
import { AgentRegistry } from '../../lib/authoring/registry.js';
import { RunConflictError, TooManyRunsError } from '../../lib/core/errors.js';
import { requestMessage } from '../../lib/engine/control-requests.js';
import { forkRun } from '../../lib/engine/fork.js';
import { startRun } from '../../lib/engine/start-run.js';
import { runStep } from '../../lib/engine/step-runner.js';
import type { ModelRequest } from '../../lib/core/messages.js';
import { ScriptedModel, StaticModelResolver, type ScriptedTurn } from '../../lib/models/scripted-model.js';
import type { Admission } from '../../lib/ports/admission.js';
import type { RunRef } from '../../lib/core/run-ref.js';
import { spawnWorker, type World, type WorkerProcess } from '../../lib/testing/world.js';
import { createTestStack, endpointsFor, type TestStack } from '../setup/emulator-context.js';

type Target = 'memory' | 'dynalite' | 'dynamodb-local';
const targets: Target[] = ['memory', 'dynalite', 'dynamodb-local'];

/** Ports whose next call of a named method fails once ("log.append"), as a store error would. */
function faulty<T extends object>(target: T, port: string, armed: Set<string>): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (armed.delete(`${port}.${String(prop)}`)) return Promise.reject(new Error(`injected fault: ${port}.${String(prop)}`));
        return (value as (...a: unknown[]) => unknown).apply(obj, args);
      };
    },
  });
}

const price = { inputPerMTokUsd: 1, outputPerMTokUsd: 2 };
const child = defineAgent({ name: 'helper', version: '1', model: { id: 'scripted:child', maxOutputTokens: 64, price }, system: { version: 's', text: 'Help.' }, tools: [] });
const agent = defineAgent({
  name: 'agent',
  version: '1',
  model: { id: 'scripted:test', maxOutputTokens: 64, price },
  input: z.string(),
  // Built from the input: "explode" makes the instructions function throw (after admission).
  system: {
    version: 's1',
    text: (input) => {
      if (input === 'explode') throw new Error('policy store is down');
      return `Serve: ${input}`;
    },
  },
  tools: [agentTool(child, { name: 'ask_helper', description: 'delegate' })],
});

describe.each(targets)('admission on %s: every path takes a slot, every failure after it gives it back', (target) => {
  const available = target === 'memory' || endpointsFor(target) !== undefined;
  let stack: TestStack | undefined;
  beforeAll(async () => {
    if (target !== 'memory' && available) stack = await createTestStack(target, `${target === 'dynalite' ? 'dl' : 'ddb'}-admit`);
  });
  afterAll(async () => {
    await stack?.dispose();
  });

  /** A fresh tenant on the target's storage with a limit of `max`, and its fault switch. */
  function limited(max: number) {
    const clock = new ManualClock();
    const armed = new Set<string>();
    const tenant = `t${randomUUID().slice(0, 8)}`;
    let store: MemoryStore | DynamoStore;
    let admission: Admission;
    if (stack) {
      const dynamo = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => clock.now(), retry: { sleep: async () => undefined } });
      store = dynamo;
      admission = dynamo;
    } else {
      store = new MemoryStore();
      admission = new MemoryAdmission();
    }
    const queue = new MemoryStepQueue();
    // The parent calls its helper once, then answers; every other model call answers at once.
    const parentModel = new ScriptedModel(
      Array.from({ length: 40 }, () => (r: ModelRequest): ScriptedTurn => {
        const asked = r.messages.some((m) => m.role === 'user' && JSON.stringify(m.content).includes('delegate'));
        const answered = r.messages.some((m) => m.role === 'tool');
        return asked && !answered ? { calls: [{ name: 'ask_helper', args: { task: 'look it up' } }] } : { text: 'done' };
      }),
    );
    const world: World = {
      storage: { log: faulty(store, 'log', armed), heads: faulty(store, 'heads', armed), inbox: faulty(store, 'inbox', armed), blobs: new MemoryBlobStore(), queue },
      clock,
      registry: new AgentRegistry().register(agent),
      models: new StaticModelResolver({ 'scripted:test': parentModel, 'scripted:child': new ScriptedModel(Array.from({ length: 40 }, () => ({ text: 'found it' }))) }),
    };
    const worker = spawnWorker(world, undefined, { config: { maxActiveRuns: max, admissionRetryAfterS: 3 } }, { admission });
    const ref = (runId: string): RunRef => ({ tenant, runId });
    return {
      world,
      worker,
      armed,
      tenant,
      ref,
      holders: () => admission.holders(tenant),
      start: (runId: string, input = 'hello') => startRun(worker.deps, { tenant, runId, agent: 'agent', input }),
      /** Every queued tick to the worker, until the queue is empty (runs end, children included). */
      drain: () => drainAll(world, worker),
      status: async (runId: string) => (await world.storage.heads.getHead(ref(runId)))?.status,
    };
  }

  it.runIf(available)('three 409s on finished run ids give their slots back: the tenant is not locked out (409 on an unfinished id keeps that run its slot)', async () => {
    const t = limited(3);
    for (const id of ['r1', 'r2', 'r3']) await t.start(id);
    await t.drain();
    for (const id of ['r1', 'r2', 'r3']) expect(await t.status(id)).toBe('completed');
    expect(await t.holders()).toEqual([]);
    for (const id of ['r1', 'r2', 'r3']) await expect(t.start(id, 'another request')).rejects.toBeInstanceOf(RunConflictError);
    expect(await t.holders()).toEqual([]);
    for (const id of ['n1', 'n2', 'n3']) expect(await t.start(id)).toMatchObject({ created: true });
    await expect(t.start('n4')).rejects.toBeInstanceOf(TooManyRunsError);
    // A conflict on a run that still works leaves it its slot.
    await expect(t.start('n1', 'another request')).rejects.toBeInstanceOf(RunConflictError);
    expect(await t.holders()).toEqual(['n1', 'n2', 'n3']);
  });

  it.runIf(available)('start: a store error at the append, or instructions that throw, gives the slot back; a fault after the append keeps it for the run, which a retry finishes', async () => {
    const t = limited(2);
    t.armed.add('log.append');
    await expect(t.start('s1')).rejects.toThrow('injected fault: log.append');
    expect(await t.holders()).toEqual([]);
    expect(await t.world.storage.log.readOne(t.ref('s1'), 1)).toBeUndefined();
    await expect(t.start('s2', 'explode')).rejects.toMatchObject({ code: 'instructions_failed' });
    expect(await t.holders()).toEqual([]);
    // After run_started is stored the run exists: its slot stays while it works.
    t.armed.add('heads.createHead');
    await expect(t.start('s3')).rejects.toThrow('injected fault: heads.createHead');
    expect(await t.holders()).toEqual(['s3']);
    expect(await t.start('s3')).toMatchObject({ runId: 's3', created: false, status: 'running' });
    expect(await t.start('s1')).toMatchObject({ created: true });
    expect(await t.holders()).toEqual(['s1', 's3']);
    await t.drain();
    expect(await t.holders()).toEqual([]);
  });

  it.runIf(available)('fork: takes a slot (refused at the limit, writing nothing), gives it back on a store error, holds it while the fork works', async () => {
    const t = limited(2);
    await t.start('src');
    await t.drain();
    await t.start('busy-1');
    await t.start('busy-2');
    const fork = (runId: string) => forkRun(t.worker.deps, { tenant: t.tenant, from: 'src', atSeq: 1, runId, input: 'forked' });
    await expect(fork('f1')).rejects.toBeInstanceOf(TooManyRunsError);
    expect(await t.world.storage.log.readOne(t.ref('f1'), 1)).toBeUndefined();
    await t.drain();
    expect(await t.holders()).toEqual([]);
    t.armed.add('log.append');
    await expect(fork('f1')).rejects.toThrow('injected fault: log.append');
    expect(await t.holders()).toEqual([]);
    expect(await fork('f1')).toMatchObject({ created: true });
    expect(await t.holders()).toEqual(['f1']);
    // A retry of the fork that exists takes nothing more, even at the limit.
    await t.start('busy-3');
    expect(await fork('f1')).toMatchObject({ created: false });
    expect(await t.holders()).toEqual(['busy-3', 'f1']);
    await t.drain();
    expect(await t.holders()).toEqual([]);
  });

  it.runIf(available)('a follow-up message reopening a completed run takes a slot (429 at the limit), gives it back when the message is not written, and the run gives it back when it completes again', async () => {
    const t = limited(1);
    await t.start('chat');
    await t.drain();
    expect(await t.holders()).toEqual([]);
    await t.start('busy');
    await expect(requestMessage(t.worker.deps, t.ref('chat'), { input: 'one more thing' }, 'c')).rejects.toBeInstanceOf(TooManyRunsError);
    expect(await t.world.storage.inbox.list(t.ref('chat'))).toEqual([]);
    await t.drain();
    t.armed.add('inbox.put');
    await expect(requestMessage(t.worker.deps, t.ref('chat'), { input: 'one more thing' }, 'c')).rejects.toThrow('injected fault: inbox.put');
    expect(await t.holders()).toEqual([]);
    await requestMessage(t.worker.deps, t.ref('chat'), { input: 'one more thing', messageId: 'm1' }, 'c');
    expect(await t.holders()).toEqual(['chat']);
    // While it works again, it is the tenant's one unfinished run.
    await expect(t.start('other')).rejects.toBeInstanceOf(TooManyRunsError);
    await t.drain();
    expect(await t.status('chat')).toBe('completed');
    expect(await t.holders()).toEqual([]);
  });

  it.runIf(available)("a child run takes no slot: it runs under its parent's, even with the tenant at its limit", async () => {
    const t = limited(1);
    await t.start('parent', 'please delegate');
    const seen = new Set<string>();
    for (let i = 0; i < 20 && (await t.status('parent')) !== 'completed'; i++) {
      for (const id of await t.holders()) seen.add(id);
      await drainOne(t.world, t.worker);
    }
    expect(await t.status('parent')).toBe('completed');
    const children = (await t.world.storage.heads.listRuns(t.tenant, { parent: 'parent', limit: 10 })).runs;
    expect(children.map((c) => c.status)).toEqual(['completed']);
    expect([...seen]).toEqual(['parent']);
    expect(await t.holders()).toEqual([]);
  });
});

async function drainOne(world: World, worker: WorkerProcess): Promise<boolean> {
  const next = world.storage.queue.take();
  if (!next) return false;
  await runStep(worker.deps, next.tick, { owner: worker.name, deadlineAt: world.clock.now() + 300_000 });
  return true;
}

async function drainAll(world: World, worker: WorkerProcess): Promise<void> {
  for (let i = 0; i < 200; i++) if (!(await drainOne(world, worker))) return;
  throw new Error('still ticking after 200 steps');
}
