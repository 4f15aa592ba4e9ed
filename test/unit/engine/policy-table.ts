/**
 * Every situation a started call with no result can meet, per side-effect policy, as a table: how
 * the call lost its result (workers that died before its tool ran, or after it ran and before the
 * result was written), what verify() says, whether a person approved the call first or answers
 * the park afterwards; and what must happen then: the exact events appended after the last death,
 * how many times the tool and verify() ran, how many writes landed, and the call's result.
 *
 * Shared by the memory test (policy-table.test.ts), the same table on the emulators
 * (test/integration/aws-policy-table.test.ts) and the mutation checks (policy-mutations.test.ts),
 * which swap branches of the decision and require some row of this table to fail.
 */
import { z } from 'zod';
import { ManualClock } from '../../../lib/adapters/memory/manual-clock.js';
import { ToolOutcomeUnknownError } from '../../../lib/core/errors.js';
import type { RunEvent } from '../../../lib/core/events.js';
import { foldLog } from '../../../lib/core/fold.js';
import { AgentRegistry } from '../../../lib/authoring/registry.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { WorkerHalt } from '../../../lib/engine/checkpoints.js';
import { requestApproval } from '../../../lib/engine/control-requests.js';
import { requestCancel, requestResolution } from '../../../lib/engine/requests.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { type VerifyOutcome } from '../../../lib/authoring/types.js';
import { ScriptedModel, StaticModelResolver } from '../../../lib/models/scripted-model.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { memoryStorage, spawnWorker, type World, type WorldStorage } from '../../../lib/testing/world.js';
import { haltAt } from './helpers.js';

export type Policy = 'rerun' | 'idempotency_key' | 'verify' | 'escalate';

/** What verify() does: look in the ledger (landed iff the write happened), or fail to tell. */
export type VerifyBehaviour = 'look' | 'unknown' | 'throws' | 'times_out';

/**
 * Where a worker died: after tool_started and before the tool ran, after it ran (the write
 * landed), or right before its next tool_result append (after verify() was recorded).
 */
export type Death = 'before-tool' | 'after-tool' | 'before-append:tool_result';

export interface PolicyCase {
  name: string;
  policy: Policy;
  verify?: VerifyBehaviour;
  /** The tool needs approval; a person approves the call before it first starts. */
  approval?: boolean;
  deaths: Death[];
  /** A cancel arrives after the deaths, before any worker decides. */
  cancel?: boolean;
  /**
   * The next worker comes once the dead one's lease lapsed but before the call's notAfter + grace
   * (the tool may still be running elsewhere): only that one step is observed.
   */
  early?: boolean;
  /** A person's answer to the park the decision leads to. */
  resolve?: 'succeeded' | 'failed' | 'rerun';
  /** Workers that die in the start a person's rerun allowed. */
  deathsAfterResolve?: Death[];
  /** The tool's first run writes, then says its outcome is unknown (ToolOutcomeUnknownError). */
  unknownFirst?: boolean;
  expect: Expected;
}

export interface Expected {
  /** Every event appended after the last death, in order (see describeEvent). */
  tail: string[];
  /** Tool executions after the last death. */
  execs: number;
  /** verify() invocations after the last death. */
  verifies: number;
  /** Writes that landed at the service, over the whole run (a keyed write deduplicates). */
  landed: number;
  /** The call's result at the end: `source:ok|error`, or `none`. */
  result: string;
  status: 'completed' | 'parked' | 'cancelled' | 'waiting';
}

export const CALL = '3-0';
const TIMEOUT_MS = 5_000;
/** An early case's tool may run longer than a lease: a new holder must wait it out. */
const LONG_TIMEOUT_MS = 120_000;
const GRACE_MS = 1_000;
/** Past a dead worker's lease (60 s) and past the call's notAfter + grace. */
const AFTER_DEATH_MS = 61_000;
/** Default engine config: 3 attempts of a keyed or verified write, 4 crashed starts of a read. */
export const MAX_TOOL_ATTEMPTS = 3;
export const MAX_CRASHED = 4;

/** One event as the table spells it: the type and what distinguishes one action from another. */
export function describeEvent(e: RunEvent): string {
  switch (e.type) {
    case 'tool_started':
      return `tool_started#${e.attempt}`;
    case 'tool_result':
      return `tool_result:${e.source}:${e.ok ? 'ok' : 'error'}`;
    case 'tool_verified':
      return `tool_verified:${e.status}`;
    case 'attention_required':
      return `attention:${e.reason}`;
    case 'attention_resolved':
      return `resolved:${e.outcome}`;
    case 'approval_decided':
      return `approval:${e.decision}`;
    case 'run_cancelled':
      return `run_cancelled[${e.unresolved.join(',')}]`;
    default:
      return e.type;
  }
}

export interface Observed extends Expected {
  /** The output of a person's `succeeded` answer, when there is one. */
  humanOutput?: unknown;
  /** approval_requested events over the whole log: one for a tool that needs approval, never more. */
  approvalsAsked: number;
}

/** Fresh storage for one case; the world's clock is handed over for stores that filter by time. */
export type StorageOf = (clock: ManualClock) => WorldStorage;

interface Counters {
  execs: number;
  verifies: number;
}

/** The one-tool agent of a case, its ledger and counters, on the given storage. */
function policyWorld(c: PolicyCase, storageOf: StorageOf) {
  const ledger = new Set<string>();
  const count: Counters = { execs: 0, verifies: 0 };
  const clock = new ManualClock();
  const storage = storageOf(clock);
  const tool = defineTool({
    name: 'act',
    version: '1',
    description: 'writes something',
    input: z.object({ n: z.number() }),
    policy: c.policy,
    timeoutMs: c.early ? LONG_TIMEOUT_MS : TIMEOUT_MS,
    ...(c.approval ? { approval: 'always' as const } : {}),
    async execute({ n }, ctx) {
      count.execs++;
      // A keyed service deduplicates; the others would write again (a set counts it once here,
      // and `execs` says how often it ran).
      ledger.add(ctx.idempotencyKey);
      if (c.unknownFirst && ctx.attempt === 1) throw new ToolOutcomeUnknownError('the connection dropped after the request was sent');
      return { done: n, attempt: ctx.attempt };
    },
    ...(c.policy === 'verify' ? { verify: verifier(c.verify ?? 'look', ledger, count, clock) } : {}),
  });
  const agent = defineAgent({
    name: 'agent',
    version: '1',
    model: { id: 'scripted:policy', maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    system: { version: 'p1', text: 'You are a test agent.' },
    tools: [tool],
    graceMs: GRACE_MS,
  });
  const model = new ScriptedModel([{ calls: [{ name: 'act', args: { n: 1 } }] }, { text: 'finished' }]);
  const world: World = {
    storage,
    clock,
    registry: new AgentRegistry().register(agent),
    models: new StaticModelResolver({ 'scripted:policy': model }),
  };
  return { world, ledger, count };
}

function verifier(behaviour: VerifyBehaviour, ledger: Set<string>, count: Counters, clock: ManualClock) {
  return async (_args: { n: number }, ctx: { idempotencyKey: string; signal: AbortSignal }): Promise<VerifyOutcome> => {
    count.verifies++;
    switch (behaviour) {
      case 'look':
        return ledger.has(ctx.idempotencyKey) ? { status: 'landed', output: { verified: true } } : { status: 'not_landed' };
      case 'unknown':
        return { status: 'unknown' };
      case 'throws':
        throw new Error('the service could not be asked');
      case 'times_out':
        // Never answers on its own; gives up when its signal aborts. Time passes meanwhile.
        return new Promise<VerifyOutcome>((_, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error), { once: true });
          setImmediate(() => void clock.advance(TIMEOUT_MS));
        });
    }
  };
}

/**
 * Play one case on fresh storage: start the run, approve the call if it needs approval, let
 * workers die at the case's points, then let a healthy worker decide (and a person answer the park).
 */
export async function runPolicyCase(c: PolicyCase, storage: StorageOf = () => memoryStorage()): Promise<Observed> {
  const { world, ledger, count } = policyWorld(c, storage);
  const run = { tenant: 't', runId: 'r' };
  const healthy = spawnWorker(world);
  await startRun(healthy.deps, { ...run, agent: 'agent', input: 'go' });
  let tick = world.storage.queue.take()?.tick ?? run;
  const budget = () => ({ deadlineAt: world.clock.now() + 300_000 });
  if (c.approval) {
    await runStep(healthy.deps, tick, { owner: 'asker', ...budget() });
    await requestApproval(healthy.deps, run, { callId: CALL, decision: 'approve' }, 'alice');
    tick = world.storage.queue.take()?.tick ?? run;
  }
  const die = async (deaths: Death[]) => {
    for (const [i, death] of deaths.entries()) {
      const dying = spawnWorker(world, haltAt(death));
      const died = await runStep(dying.deps, tick, { owner: `dying-${i}`, ...budget() }).then(
        () => false,
        (error: unknown) => error instanceof WorkerHalt,
      );
      if (!died) throw new Error(`case "${c.name}": worker ${i} did not die at ${death}`);
      dying.kill();
      await world.clock.advance(AFTER_DEATH_MS);
      tick = run;
      while (world.storage.queue.take()) {
        /* ticks of requests the dead worker left: the wake below stands for them */
      }
    }
  };
  await die(c.deaths);
  const before = (await world.storage.log.read(run, { afterSeq: 0 })).events.length;
  const execs0 = count.execs;
  const verifies0 = count.verifies;
  if (c.cancel) await requestCancel(healthy.deps, run, 'bob');
  else await world.storage.queue.enqueue(run, { dedupeId: 'after-deaths' });
  let head = c.early ? await oneStep(world, healthy, run) : (await driveRun(world, run, { worker: () => healthy })).head;
  if (c.resolve && head.status === 'parked') {
    const open = head.attention.find((a) => a.callId === CALL);
    if (open) {
      await requestResolution(healthy.deps, run, { callId: CALL, outcome: c.resolve, ...(c.resolve === 'succeeded' ? { result: { by: 'hand' } } : {}) }, 'carol');
      if (c.deathsAfterResolve) {
        tick = world.storage.queue.take()?.tick ?? run;
        await die(c.deathsAfterResolve);
        await world.storage.queue.enqueue(run, { dedupeId: 'after-resolve-deaths' });
      }
      head = (await driveRun(world, run, { worker: () => healthy })).head;
    }
  }
  const events = (await world.storage.log.read(run, { afterSeq: 0 })).events as RunEvent[];
  const state = foldLog(events);
  const result = state.calls[CALL]?.result;
  return {
    tail: events.slice(before).map(describeEvent),
    execs: count.execs - execs0,
    verifies: count.verifies - verifies0,
    landed: ledger.size,
    result: result ? `${result.source}:${result.ok ? 'ok' : 'error'}` : 'none',
    status: head.status as Expected['status'],
    approvalsAsked: events.filter((e) => e.type === 'approval_requested').length,
    ...(result?.source === 'human' && result.output.kind === 'inline' ? { humanOutput: result.output.value } : {}),
  };
}

/** One step of a healthy worker on the run's tick; the run must then wait for the call's deadline. */
async function oneStep(world: World, worker: ReturnType<typeof spawnWorker>, run: { tenant: string; runId: string }) {
  const tick = world.storage.queue.take()?.tick ?? run;
  await runStep(worker.deps, tick, { owner: 'early', deadlineAt: world.clock.now() + 300_000 });
  const head = await world.storage.heads.getHead(run);
  if (!head) throw new Error('no head');
  const state = foldLog((await world.storage.log.read(run, { afterSeq: 0 })).events);
  const due = (state.calls[CALL]?.notAfter ?? 0) + GRACE_MS;
  // Waiting, and woken exactly when the policy may apply: not before, and not never.
  if (head.status === 'waiting' && head.wakeAt !== due) throw new Error(`waits until ${head.wakeAt}, not the call's notAfter + grace ${due}`);
  return head;
}

/** Where an observation differs from the case's expectation (empty: it holds). */
export function mismatches(c: PolicyCase, o: Observed): string[] {
  const out: string[] = [];
  const e = c.expect;
  if (JSON.stringify(o.tail) !== JSON.stringify(e.tail)) out.push(`events after the deaths ${JSON.stringify(o.tail)}, expected ${JSON.stringify(e.tail)}`);
  for (const k of ['execs', 'verifies', 'landed', 'result', 'status'] as const) {
    if (o[k] !== e[k]) out.push(`${k} ${o[k]}, expected ${e[k]}`);
  }
  if (o.approvalsAsked !== (c.approval ? 1 : 0)) out.push(`approval asked ${o.approvalsAsked} times, expected ${c.approval ? 1 : 0}`);
  if (c.resolve === 'succeeded' && JSON.stringify(o.humanOutput) !== JSON.stringify({ by: 'hand' })) {
    out.push(`the person's result is ${JSON.stringify(o.humanOutput)}, not the one they gave`);
  }
  return out;
}

/** Run a case and report its mismatches, an exception included (a mutant may corrupt the log). */
export async function checkCase(c: PolicyCase, storage?: StorageOf): Promise<string[]> {
  try {
    return mismatches(c, await runPolicyCase(c, storage));
  } catch (error) {
    return [`threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`];
  }
}

const times = (n: number, d: Death): Death[] => Array.from({ length: n }, () => d);
/** The run goes on after the call has its result: the model answers, the run completes. */
const FINISH = ['model_response', 'run_completed'];
const FINISH_UNCARRIED = ['model_started', 'model_response', 'run_completed'];

export const POLICY_CASES: PolicyCase[] = [
  // rerun: a read runs again until its crashed starts reach MAX_CRASHED, then a person decides.
  {
    name: 'rerun, attempts left, died before the tool ran: runs again',
    policy: 'rerun',
    deaths: ['before-tool'],
    expect: { tail: ['tool_started#2', 'tool_result:tool:ok', ...FINISH], execs: 1, verifies: 0, landed: 1, result: 'tool:ok', status: 'completed' },
  },
  {
    name: 'rerun, attempts left, died after the tool ran: runs again',
    policy: 'rerun',
    deaths: ['after-tool'],
    expect: { tail: ['tool_started#2', 'tool_result:tool:ok', ...FINISH], execs: 1, verifies: 0, landed: 1, result: 'tool:ok', status: 'completed' },
  },
  {
    name: 'rerun, one crashed start left: runs the last time',
    policy: 'rerun',
    deaths: times(MAX_CRASHED - 1, 'before-tool'),
    expect: { tail: [`tool_started#${MAX_CRASHED}`, 'tool_result:tool:ok', ...FINISH], execs: 1, verifies: 0, landed: 1, result: 'tool:ok', status: 'completed' },
  },
  {
    name: 'rerun, crashed starts exhausted: parks, no start, no error result',
    policy: 'rerun',
    deaths: times(MAX_CRASHED, 'before-tool'),
    expect: { tail: ['attention:tool_attempts_exhausted'], execs: 0, verifies: 0, landed: 0, result: 'none', status: 'parked' },
  },
  {
    name: 'rerun, exhausted, a person answers rerun: one more start',
    policy: 'rerun',
    deaths: times(MAX_CRASHED, 'before-tool'),
    resolve: 'rerun',
    expect: {
      tail: ['attention:tool_attempts_exhausted', 'resolved:rerun', `tool_started#${MAX_CRASHED + 1}`, 'tool_result:tool:ok', ...FINISH],
      execs: 1,
      verifies: 0,
      landed: 1,
      result: 'tool:ok',
      status: 'completed',
    },
  },
  {
    name: "rerun, exhausted, a person's rerun dies too: a fresh crash budget, runs again",
    policy: 'rerun',
    deaths: times(MAX_CRASHED, 'before-tool'),
    resolve: 'rerun',
    deathsAfterResolve: ['before-tool'],
    expect: {
      tail: ['attention:tool_attempts_exhausted', 'resolved:rerun', `tool_started#${MAX_CRASHED + 1}`, `tool_started#${MAX_CRASHED + 2}`, 'tool_result:tool:ok', ...FINISH],
      execs: 1,
      verifies: 0,
      landed: 1,
      result: 'tool:ok',
      status: 'completed',
    },
  },
  {
    name: 'rerun, exhausted, a person answers failed: an error result, no start',
    policy: 'rerun',
    deaths: times(MAX_CRASHED, 'before-tool'),
    resolve: 'failed',
    expect: { tail: ['attention:tool_attempts_exhausted', 'resolved:failed', ...FINISH_UNCARRIED], execs: 0, verifies: 0, landed: 0, result: 'human:error', status: 'completed' },
  },
  {
    name: 'rerun, a cancel arrives: abandoned, nothing unresolved, no start',
    policy: 'rerun',
    deaths: ['after-tool'],
    cancel: true,
    expect: { tail: ['cancel_requested', 'run_cancelled[]'], execs: 0, verifies: 0, landed: 1, result: 'none', status: 'cancelled' },
  },

  // idempotency_key: a keyed write runs again with the same key until MAX_TOOL_ATTEMPTS starts.
  {
    name: 'idempotency_key, attempts left, died before the tool ran: runs again with the key',
    policy: 'idempotency_key',
    deaths: ['before-tool'],
    expect: { tail: ['tool_started#2', 'tool_result:tool:ok', ...FINISH], execs: 1, verifies: 0, landed: 1, result: 'tool:ok', status: 'completed' },
  },
  {
    name: 'idempotency_key, attempts left, died after the write: runs again, the service dedupes',
    policy: 'idempotency_key',
    deaths: ['after-tool'],
    expect: { tail: ['tool_started#2', 'tool_result:tool:ok', ...FINISH], execs: 1, verifies: 0, landed: 1, result: 'tool:ok', status: 'completed' },
  },
  {
    name: 'idempotency_key, one attempt left: runs the last time',
    policy: 'idempotency_key',
    deaths: times(MAX_TOOL_ATTEMPTS - 1, 'before-tool'),
    expect: { tail: [`tool_started#${MAX_TOOL_ATTEMPTS}`, 'tool_result:tool:ok', ...FINISH], execs: 1, verifies: 0, landed: 1, result: 'tool:ok', status: 'completed' },
  },
  {
    name: 'idempotency_key, attempts exhausted: parks, no start, no result',
    policy: 'idempotency_key',
    deaths: times(MAX_TOOL_ATTEMPTS, 'before-tool'),
    expect: { tail: ['attention:tool_attempts_exhausted'], execs: 0, verifies: 0, landed: 0, result: 'none', status: 'parked' },
  },
  {
    name: 'idempotency_key, exhausted, a person answers succeeded: their result, no start',
    policy: 'idempotency_key',
    deaths: times(MAX_TOOL_ATTEMPTS, 'after-tool'),
    resolve: 'succeeded',
    expect: { tail: ['attention:tool_attempts_exhausted', 'resolved:succeeded', ...FINISH_UNCARRIED], execs: 0, verifies: 0, landed: 1, result: 'human:ok', status: 'completed' },
  },
  {
    name: 'idempotency_key, a cancel arrives: left unresolved (it may land), no start',
    policy: 'idempotency_key',
    deaths: ['after-tool'],
    cancel: true,
    expect: { tail: ['cancel_requested', `run_cancelled[${CALL}]`], execs: 0, verifies: 0, landed: 1, result: 'none', status: 'cancelled' },
  },

  // verify: look first; landed → its result, not landed → run again, anything else → a person.
  {
    name: 'verify, landed: its result from verify(), no start',
    policy: 'verify',
    deaths: ['after-tool'],
    expect: { tail: ['tool_verified:landed', 'tool_result:verify:ok', ...FINISH_UNCARRIED], execs: 0, verifies: 1, landed: 1, result: 'verify:ok', status: 'completed' },
  },
  {
    name: 'verify, landed, died before the result verify() carries was written: looks again, its result, no start',
    policy: 'verify',
    deaths: ['after-tool', 'before-append:tool_result'],
    expect: { tail: ['tool_verified:landed', 'tool_result:verify:ok', ...FINISH_UNCARRIED], execs: 0, verifies: 1, landed: 1, result: 'verify:ok', status: 'completed' },
  },
  {
    name: 'verify, landed, its result lost twice: parks, no third look, no start',
    policy: 'verify',
    deaths: ['after-tool', 'before-append:tool_result', 'before-append:tool_result'],
    expect: { tail: ['attention:unknown_outcome'], execs: 0, verifies: 0, landed: 1, result: 'none', status: 'parked' },
  },
  {
    name: 'verify, not landed: runs again',
    policy: 'verify',
    deaths: ['before-tool'],
    expect: { tail: ['tool_verified:not_landed', 'tool_started#2', 'tool_result:tool:ok', ...FINISH], execs: 1, verifies: 1, landed: 1, result: 'tool:ok', status: 'completed' },
  },
  {
    name: 'verify, not landed, one attempt left: runs the last time',
    policy: 'verify',
    deaths: times(MAX_TOOL_ATTEMPTS - 1, 'before-tool'),
    expect: { tail: ['tool_verified:not_landed', `tool_started#${MAX_TOOL_ATTEMPTS}`, 'tool_result:tool:ok', ...FINISH], execs: 1, verifies: 1, landed: 1, result: 'tool:ok', status: 'completed' },
  },
  {
    name: 'verify, not landed, attempts exhausted: parks, no start',
    policy: 'verify',
    deaths: times(MAX_TOOL_ATTEMPTS, 'before-tool'),
    expect: { tail: ['tool_verified:not_landed', 'attention:unknown_outcome'], execs: 0, verifies: 1, landed: 0, result: 'none', status: 'parked' },
  },
  {
    name: 'verify, unknown: parks, no start, no result',
    policy: 'verify',
    verify: 'unknown',
    deaths: ['after-tool'],
    expect: { tail: ['tool_verified:unknown', 'attention:unknown_outcome'], execs: 0, verifies: 1, landed: 1, result: 'none', status: 'parked' },
  },
  {
    name: 'verify, verify() threw: unknown, parks',
    policy: 'verify',
    verify: 'throws',
    deaths: ['before-tool'],
    expect: { tail: ['tool_verified:unknown', 'attention:unknown_outcome'], execs: 0, verifies: 1, landed: 0, result: 'none', status: 'parked' },
  },
  {
    name: 'verify, verify() timed out: unknown, parks',
    policy: 'verify',
    verify: 'times_out',
    deaths: ['after-tool'],
    expect: { tail: ['tool_verified:unknown', 'attention:unknown_outcome'], execs: 0, verifies: 1, landed: 1, result: 'none', status: 'parked' },
  },
  {
    name: 'verify, unknown, a person answers rerun: runs again without looking again',
    policy: 'verify',
    verify: 'unknown',
    deaths: ['before-tool'],
    resolve: 'rerun',
    expect: {
      tail: ['tool_verified:unknown', 'attention:unknown_outcome', 'resolved:rerun', 'tool_started#2', 'tool_result:tool:ok', ...FINISH],
      execs: 1,
      verifies: 1,
      landed: 1,
      result: 'tool:ok',
      status: 'completed',
    },
  },
  {
    name: 'verify, a cancel arrives: left unresolved, not verified, no start',
    policy: 'verify',
    deaths: ['after-tool'],
    cancel: true,
    expect: { tail: ['cancel_requested', `run_cancelled[${CALL}]`], execs: 0, verifies: 0, landed: 1, result: 'none', status: 'cancelled' },
  },

  // escalate: a person decides; each answer the API allows for a call.
  {
    name: 'escalate: parks, no start, no result',
    policy: 'escalate',
    deaths: ['after-tool'],
    expect: { tail: ['attention:unknown_outcome'], execs: 0, verifies: 0, landed: 1, result: 'none', status: 'parked' },
  },
  {
    name: 'escalate, a person answers succeeded: their result, no start',
    policy: 'escalate',
    deaths: ['after-tool'],
    resolve: 'succeeded',
    expect: { tail: ['attention:unknown_outcome', 'resolved:succeeded', ...FINISH_UNCARRIED], execs: 0, verifies: 0, landed: 1, result: 'human:ok', status: 'completed' },
  },
  {
    name: 'escalate, a person answers failed: an error result, no start',
    policy: 'escalate',
    deaths: ['after-tool'],
    resolve: 'failed',
    expect: { tail: ['attention:unknown_outcome', 'resolved:failed', ...FINISH_UNCARRIED], execs: 0, verifies: 0, landed: 1, result: 'human:error', status: 'completed' },
  },
  {
    name: 'escalate, a person answers rerun: one more start',
    policy: 'escalate',
    deaths: ['before-tool'],
    resolve: 'rerun',
    expect: { tail: ['attention:unknown_outcome', 'resolved:rerun', 'tool_started#2', 'tool_result:tool:ok', ...FINISH], execs: 1, verifies: 0, landed: 1, result: 'tool:ok', status: 'completed' },
  },
  {
    name: 'escalate, a person answers rerun and that start dies too: parks again, no second start',
    policy: 'escalate',
    deaths: ['before-tool'],
    resolve: 'rerun',
    deathsAfterResolve: ['before-tool'],
    expect: {
      tail: ['attention:unknown_outcome', 'resolved:rerun', 'tool_started#2', 'attention:unknown_outcome'],
      execs: 0,
      verifies: 0,
      landed: 0,
      result: 'none',
      status: 'parked',
    },
  },
  {
    name: 'escalate, the tool says its outcome is unknown: parks, no error result',
    policy: 'escalate',
    deaths: [],
    unknownFirst: true,
    expect: { tail: ['model_started', 'model_response', 'tool_started#1', 'attention:unknown_outcome'], execs: 1, verifies: 0, landed: 1, result: 'none', status: 'parked' },
  },
  {
    name: 'idempotency_key, the tool says its outcome is unknown: runs again with the key',
    policy: 'idempotency_key',
    deaths: [],
    unknownFirst: true,
    expect: {
      tail: ['model_started', 'model_response', 'tool_started#1', 'tool_started#2', 'tool_result:tool:ok', ...FINISH],
      execs: 2,
      verifies: 0,
      landed: 1,
      result: 'tool:ok',
      status: 'completed',
    },
  },
  {
    name: 'escalate, a cancel arrives: left unresolved, no start',
    policy: 'escalate',
    deaths: ['after-tool'],
    cancel: true,
    expect: { tail: ['cancel_requested', `run_cancelled[${CALL}]`], execs: 0, verifies: 0, landed: 1, result: 'none', status: 'cancelled' },
  },

  // Before notAfter + grace no policy applies: the call may still be running elsewhere.
  ...(['rerun', 'idempotency_key', 'verify', 'escalate'] as const).map(
    (policy): PolicyCase => ({
      name: `${policy}, before notAfter + grace: waits, no start, no look, no park`,
      policy,
      deaths: ['after-tool'],
      early: true,
      expect: { tail: [], execs: 0, verifies: 0, landed: 1, result: 'none', status: 'waiting' },
    }),
  ),

  // Approved calls: the approval covers the restart (same arguments); the policy decides as without it.
  {
    name: 'approved rerun call: runs again, no new approval asked',
    policy: 'rerun',
    approval: true,
    deaths: ['before-tool'],
    expect: { tail: ['tool_started#2', 'tool_result:tool:ok', ...FINISH], execs: 1, verifies: 0, landed: 1, result: 'tool:ok', status: 'completed' },
  },
  {
    name: 'approved idempotency_key call: runs again, no new approval asked',
    policy: 'idempotency_key',
    approval: true,
    deaths: ['after-tool'],
    expect: { tail: ['tool_started#2', 'tool_result:tool:ok', ...FINISH], execs: 1, verifies: 0, landed: 1, result: 'tool:ok', status: 'completed' },
  },
  {
    name: 'approved idempotency_key call, attempts exhausted: parks',
    policy: 'idempotency_key',
    approval: true,
    deaths: times(MAX_TOOL_ATTEMPTS, 'before-tool'),
    expect: { tail: ['attention:tool_attempts_exhausted'], execs: 0, verifies: 0, landed: 0, result: 'none', status: 'parked' },
  },
  {
    name: 'approved verify call, landed: its result from verify(), no start',
    policy: 'verify',
    approval: true,
    deaths: ['after-tool'],
    expect: { tail: ['tool_verified:landed', 'tool_result:verify:ok', ...FINISH_UNCARRIED], execs: 0, verifies: 1, landed: 1, result: 'verify:ok', status: 'completed' },
  },
  {
    name: 'approved verify call, not landed: runs again, no new approval asked',
    policy: 'verify',
    approval: true,
    deaths: ['before-tool'],
    expect: { tail: ['tool_verified:not_landed', 'tool_started#2', 'tool_result:tool:ok', ...FINISH], execs: 1, verifies: 1, landed: 1, result: 'tool:ok', status: 'completed' },
  },
  {
    name: 'approved escalate call: parks, no start',
    policy: 'escalate',
    approval: true,
    deaths: ['after-tool'],
    expect: { tail: ['attention:unknown_outcome'], execs: 0, verifies: 0, landed: 1, result: 'none', status: 'parked' },
  },
  {
    name: 'approved escalate call, a person answers rerun: runs again, no new approval asked',
    policy: 'escalate',
    approval: true,
    deaths: ['before-tool'],
    resolve: 'rerun',
    expect: { tail: ['attention:unknown_outcome', 'resolved:rerun', 'tool_started#2', 'tool_result:tool:ok', ...FINISH], execs: 1, verifies: 0, landed: 1, result: 'tool:ok', status: 'completed' },
  },
];
