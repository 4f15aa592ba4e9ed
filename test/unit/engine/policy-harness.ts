/**
 * The side-effect policies through the crash harness: a one-tool agent per policy (with and
 * without approval), crashed at every checkpoint and write. Besides the harness's own invariants
 * (same answer, no write twice, budgets never reset), every point's log is read back and its
 * started-no-result decisions checked against the policy (policyTraceProblems), and the branches
 * taken are collected, so a test can require that each branch was met at some point.
 */
import { z } from 'zod';
import { ManualClock } from '../../../lib/adapters/memory/manual-clock.js';
import type { RunEvent } from '../../../lib/core/events.js';
import { idempotencyKey } from '../../../lib/core/run-ref.js';
import { AgentRegistry } from '../../../lib/authoring/registry.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { requestApproval } from '../../../lib/engine/control-requests.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { ScriptedModel, StaticModelResolver } from '../../../lib/models/scripted-model.js';
import type { HarnessScenario, PointReport } from '../../../lib/testing/crash-harness.js';
import type { Outside } from '../../../lib/testing/driver.js';
import { effectLog, resolveFromEffects, type EffectRecorder, type RecordedEffect } from '../../../lib/testing/side-effects.js';
import { memoryStorage, type World, type WorldStorage } from '../../../lib/testing/world.js';
import { MAX_CRASHED, MAX_TOOL_ATTEMPTS, type Policy, type StorageOf } from './policy-table.js';

export interface PolicyWorld extends World {
  effects: EffectRecorder;
  /** verify() invocations, each with what it saw. */
  looks: ('landed' | 'not_landed')[];
}

const RUN = { tenant: 't', runId: 'policy-run' };

/** The one-tool agent: its fake service writes to an effect log keyed by the idempotency key. */
export function policyWorld(policy: Policy, approval: boolean, storageOf: StorageOf): PolicyWorld {
  const clock = new ManualClock();
  const storage = storageOf(clock);
  const effects = effectLog();
  const looks: PolicyWorld['looks'] = [];
  const tool = defineTool({
    name: 'act',
    version: '1',
    description: 'does something',
    input: z.object({ n: z.number() }),
    policy,
    timeoutMs: 5_000,
    ...(approval ? { approval: 'always' as const } : {}),
    async execute({ n }, ctx) {
      if (policy === 'rerun') effects.read('act', ctx.idempotencyKey);
      else if (policy === 'idempotency_key') effects.writeOnce('act', ctx.idempotencyKey, { n });
      else effects.write('act', ctx.idempotencyKey, { n });
      return { n };
    },
    ...(policy === 'verify'
      ? {
          async verify(_args: { n: number }, ctx: { idempotencyKey: string }) {
            const landed = effects.find(ctx.idempotencyKey, 'act');
            looks.push(landed ? 'landed' : 'not_landed');
            // What the tool itself returns, so the answer is the same whichever way it was recorded.
            return landed ? { status: 'landed' as const, output: landed.detail as { n: number } } : { status: 'not_landed' as const };
          },
        }
      : {}),
  });
  const agent = defineAgent({
    name: 'agent',
    version: '1',
    model: { id: 'scripted:policy', maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    system: { version: 'p1', text: 'You are a test agent.' },
    tools: [tool],
    graceMs: 1_000,
  });
  const model = new ScriptedModel([{ calls: [{ name: 'act', args: { n: 1 } }] }, { text: 'finished' }]);
  return {
    storage,
    clock,
    registry: new AgentRegistry().register(agent),
    models: new StaticModelResolver({ 'scripted:policy': model }),
    effects,
    looks,
  };
}

/** A person who approves every call that waits for approval (asking again after a crash is harmless). */
function approver(): Outside {
  return async (head, deps) => {
    const wait = (head.waits ?? []).find((w) => w.kind === 'approval');
    if (!wait) return false;
    const run = { tenant: head.tenant, runId: head.runId };
    return requestApproval(deps, run, { callId: wait.callId, decision: 'approve' }, 'alice').then(
      () => true,
      (error: unknown) => {
        if (String((error as { code?: unknown }).code).endsWith('_conflict')) return false;
        throw error;
      },
    );
  };
}

export interface PolicyScenario extends HarnessScenario<PolicyWorld, RecordedEffect> {
  /** Every world built, in order: the last one is the point just run (read it in onPoint). */
  worlds: PolicyWorld[];
}

export function policyScenario(policy: Policy, options: { approval?: boolean; storage?: (n: number, clock: ManualClock) => WorldStorage; label?: string } = {}): PolicyScenario {
  const worlds: PolicyWorld[] = [];
  return {
    name: `${policy}${options.approval ? ' (approved)' : ''} tool${options.label ? ` on ${options.label}` : ''}`,
    worlds,
    world: () => {
      const n = worlds.length;
      const w = policyWorld(policy, options.approval ?? false, (clock) => options.storage?.(n, clock) ?? memoryStorage());
      worlds.push(w);
      return w;
    },
    request: { ...RUN, agent: 'agent', input: 'go' },
    sideEffects: (w) => w.effects.all(),
    resolver: (w) => resolveFromEffects(w.effects),
    ...(options.approval ? { outside: () => approver() } : {}),
  };
}

/** What a point's log shows the decision did with the started call: the branches taken. */
export type Branch =
  | 'restart'
  | 'verified:landed'
  | 'verified:not_landed'
  | 'verified:unknown'
  | 'attention:unknown_outcome'
  | 'attention:tool_attempts_exhausted'
  | 'resolved:succeeded'
  | 'resolved:failed'
  | 'resolved:rerun';

/**
 * Walk one call's events and check every step taken after a start with no result against the
 * policy: who may start it again, who may look, who may park it, and that no result is invented.
 * Returns the problems (empty: the trace is legal) and the branches taken.
 */
export function policyTraceProblems(policy: Policy, events: readonly RunEvent[], effects: readonly RecordedEffect[]): { problems: string[]; branches: Set<Branch> } {
  const problems: string[] = [];
  const branches = new Set<Branch>();
  const landed = (key: string) => effects.some((e) => e.key === key && e.applied && !e.readOnly);
  let attempt = 0;
  let sinceRerun = 0; // crashed starts since a person last answered rerun
  let looked: 'landed' | 'not_landed' | 'unknown' | undefined;
  let rerunAllowed = false;
  let parked = false;
  let done = false;
  for (const e of events) {
    if (!('callId' in e) || typeof e.callId !== 'string') continue;
    const key = idempotencyKey(RUN, e.callId);
    const at = `seq ${e.seq} (${e.type})`;
    switch (e.type) {
      case 'tool_started':
        if (done) problems.push(`${at}: started after its result`);
        if (attempt > 0) {
          branches.add('restart');
          const byPolicy =
            (policy === 'rerun' && sinceRerun < MAX_CRASHED) ||
            (policy === 'idempotency_key' && attempt < MAX_TOOL_ATTEMPTS) ||
            (policy === 'verify' && looked === 'not_landed' && attempt < MAX_TOOL_ATTEMPTS);
          if (!byPolicy && !rerunAllowed) problems.push(`${at}: attempt ${e.attempt} of a ${policy} call that neither its policy nor a person allowed (looked: ${looked ?? 'no'})`);
          if (parked && !rerunAllowed) problems.push(`${at}: started while parked`);
        }
        if (rerunAllowed) sinceRerun = 0;
        attempt = e.attempt;
        sinceRerun++;
        looked = undefined;
        rerunAllowed = false;
        break;
      case 'tool_verified':
        if (policy !== 'verify') problems.push(`${at}: a ${policy} call was verified`);
        looked = e.status;
        branches.add(`verified:${e.status}`);
        // Landed must be true of the service (its ledger only grows, so "not landed" may have
        // become false since: the restart it leads to writes, once, as the harness checks).
        if (e.status === 'landed' && !landed(key)) problems.push(`${at}: verify said landed and the service holds no write`);
        break;
      case 'tool_result':
        if (e.source === 'verify' && looked !== 'landed') problems.push(`${at}: a result from verify without verify saying landed`);
        if (e.source !== 'tool' && e.source !== 'verify') problems.push(`${at}: a result of source ${e.source}`);
        done = true;
        break;
      case 'attention_required': {
        parked = true;
        branches.add(`attention:${e.reason}` as Branch);
        const expected = policy === 'escalate' || policy === 'verify' ? 'unknown_outcome' : 'tool_attempts_exhausted';
        if (e.reason !== expected) problems.push(`${at}: attention ${e.reason} for a ${policy} call, expected ${expected}`);
        if (policy === 'rerun' && sinceRerun < MAX_CRASHED) problems.push(`${at}: a read parked after ${sinceRerun} crashed starts`);
        if (policy === 'idempotency_key' && attempt < MAX_TOOL_ATTEMPTS) problems.push(`${at}: a keyed write parked after ${attempt} attempts`);
        if (policy === 'verify' && (looked === 'landed' || (looked === 'not_landed' && attempt < MAX_TOOL_ATTEMPTS) || looked === undefined)) {
          problems.push(`${at}: a verify call parked after verify said ${looked ?? 'nothing'} at attempt ${attempt}`);
        }
        break;
      }
      case 'attention_resolved':
        parked = false;
        branches.add(`resolved:${e.outcome}` as Branch);
        if (e.outcome === 'rerun') rerunAllowed = true;
        else done = true;
        break;
      default:
        break;
    }
  }
  return { problems, branches };
}

/** Read a point's world back and check its trace; returns the problems and branches. */
export async function checkPoint(policy: Policy, world: PolicyWorld): Promise<{ problems: string[]; branches: Set<Branch> }> {
  const events = (await world.storage.log.read(RUN, { afterSeq: 0 })).events as RunEvent[];
  return policyTraceProblems(policy, events, world.effects.all());
}

/** onPoint for runCrashHarness: check each point's trace as it finishes, and gather the branches. */
export function pointChecker(policy: Policy, scenario: PolicyScenario) {
  const branches = new Set<Branch>();
  const problems: string[] = [];
  const pending: Promise<void>[] = [];
  return {
    branches,
    problems,
    onPoint: (p: PointReport) => {
      const world = scenario.worlds.at(-1);
      if (!world) return;
      const at = p.at.map((a) => a.label).join(' then ');
      pending.push(
        checkPoint(policy, world).then((r) => {
          for (const b of r.branches) branches.add(b);
          for (const problem of r.problems) problems.push(`${p.kind} at ${at}: ${problem}`);
        }),
      );
    },
    settled: () => Promise.all(pending),
  };
}

/** The branches a single crash anywhere must reach for each policy (exhaustion needs more deaths: the table). */
export const BRANCHES_MET: Record<Policy, Branch[]> = {
  rerun: ['restart'],
  idempotency_key: ['restart'],
  verify: ['verified:landed', 'verified:not_landed', 'restart'],
  escalate: ['attention:unknown_outcome', 'resolved:succeeded', 'resolved:rerun', 'restart'],
};
