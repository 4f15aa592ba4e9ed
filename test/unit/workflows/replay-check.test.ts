import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replayCommand } from '../../../dev/cli/replay-command.js';
import type { Output } from '../../../dev/cli/output.js';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { defineAgents } from '../../../lib/authoring/define-agents.js';
import { checkWorkflowReplay, checkWorkflowReplays } from '../../../lib/testing/workflow-replay.js';
import { later } from '../control/helpers.js';
import { logOf } from '../engine/helpers.js';
import { startAndDrain, workflowWorld } from './world.js';

/** A workflow whose steps count their runs: the check must never run one. */
function orders(ran: { n: number }, version = '1', second = 'charge') {
  return defineWorkflow({
    name: 'orders',
    version,
    async run(ctx, input: { items: number[] }) {
      const total = await ctx.step('sum', () => (ran.n++, input.items.reduce((a, b) => a + b, 0)), { policy: 'rerun' });
      const checks = await ctx.map(input.items, (item, i) => ctx.step(`check-${i}`, () => (ran.n++, item > 0), { policy: 'rerun' }), { concurrency: 2 });
      const id = await ctx.uuid();
      await ctx.sleep(60);
      await ctx.step(second, () => (ran.n++, `${id}:${total}`), { policy: 'rerun' });
      return { total, checks };
    },
  });
}

async function recorded() {
  const ran = { n: 0 };
  const t = workflowWorld({ workflows: [orders(ran)] });
  const { events } = await startAndDrain(t, 'orders', { items: [1, 2, 3] });
  return { events, ranLive: ran.n };
}

async function completed() {
  const t = workflowWorld({ workflows: [orders({ n: 0 })] });
  await startAndDrain(t, 'orders', { items: [1, 2, 3] });
  await later(t.world, t.worker, 60_000, 1);
  return (await logOf(t.world, t.run)).events;
}

describe('checkWorkflowReplay: a recorded workflow log against code, nothing executed', () => {
  it('the same code replays the waiting run to the operation it would run next, running no step', async () => {
    const { events, ranLive } = await recorded();
    expect(ranLive).toBe(4);
    const ran = { n: 0 };
    const result = await checkWorkflowReplay(orders(ran), events);
    expect(result).toMatchObject({ verdict: 'ok', ends: 'waits', replayed: 5 });
    expect(ran.n).toBe(0);
  });

  it('a prefix of the log stops where the log cannot answer: "would run"', async () => {
    const { events } = await recorded();
    const ran = { n: 0 };
    // run_started and the first result only: the map's first check is what a worker would run next.
    const result = await checkWorkflowReplay(orders(ran), events.slice(0, 2));
    expect(result).toMatchObject({ verdict: 'ok', ends: 'would_run', replayed: 1, wouldRun: { op: 2, kind: 'step', name: 'check-0' } });
    expect(ran.n).toBe(0);
  });

  it('a renamed step is a divergence at its operation, with what the log holds and what the code asked for', async () => {
    const { events } = await recorded();
    const renamed = defineWorkflow({
      name: 'orders',
      version: '1',
      async run(ctx) {
        await ctx.step('total', () => 0, { policy: 'rerun' });
        return null;
      },
    });
    const result = await checkWorkflowReplay(renamed, events);
    expect(result).toMatchObject({ verdict: 'diverged', op: 1, expected: { kind: 'step', name: 'sum' }, found: { kind: 'step', name: 'total' } });
  });

  it('code that asks for fewer operations than the log holds diverges at the first one it no longer asks for', async () => {
    const { events } = await recorded();
    const shorter = defineWorkflow({ name: 'orders', version: '1', run: async (ctx) => ctx.step('sum', () => 0, { policy: 'rerun' }) });
    const result = await checkWorkflowReplay(shorter, events);
    expect(result).toMatchObject({ verdict: 'diverged', op: 2, expected: { kind: 'step', name: 'check-0' } });
    expect(result.verdict === 'diverged' && result.found).toBeUndefined();
  });

  it('a result held by reference is read from the recorded blobs (a runs export file); without them the run is not judged ok', async () => {
    const { events } = await recorded();
    const byRef = events.map((e) =>
      e.type === 'op_result' && e.op === 1 ? { ...e, output: { kind: 'blob', key: 'blob-sum', sha256: 'a'.repeat(64), size: 1, summary: '6' } } : e,
    );
    expect(await checkWorkflowReplay(orders({ n: 0 }), byRef, { blobs: new Map([['blob-sum', '6']]) })).toMatchObject({ verdict: 'ok', replayed: 5 });
    const agents = defineAgents({ agents: [], workflows: [orders({ n: 0 })] });
    const withBlobs = await checkWorkflowReplays({ agents, logs: [{ runId: 'wf-1', events: byRef, blobs: [{ key: 'blob-sum', text: '6' }] }] });
    expect(withBlobs).toMatchObject({ ok: 1 });
    const without = await checkWorkflowReplays({ agents, logs: [{ runId: 'wf-1', events: byRef }] });
    expect(without).toMatchObject({
      ok: 0,
      unreadable: 1,
      runs: [{ verdict: 'replay_failed', message: expect.stringContaining('blob blob-sum is not in the recorded run') }],
    });
  });

  it('an unreadable log is reported as such', async () => {
    const result = await checkWorkflowReplay(orders({ n: 0 }), [{ seq: 1, type: 'no_such_event' }]);
    expect(result).toMatchObject({ verdict: 'unreadable', reasons: [{ code: 'unknown_event_type' }] });
  });
});

describe('checkWorkflowReplays: every recorded workflow run against the registered code', () => {
  it('ok for the pinned version, diverged for a new version that changed a step, missing for an unregistered version', async () => {
    const { events } = await recorded();
    const ran = { n: 0 };
    const agents = defineAgents({ agents: [], workflows: [orders(ran), orders(ran, '2', 'capture')] });
    const logs = [{ runId: 'wf-1', events }];
    const pinned = await checkWorkflowReplays({ agents, logs });
    expect(pinned).toMatchObject({ ok: 1, diverged: 0, runs: [{ runId: 'wf-1', checkedVersion: '1', verdict: 'ok' }] });
    // The sleep's result is not in the log yet: the renamed step is asked for past it, where the log holds nothing.
    expect((await checkWorkflowReplays({ agents, logs, version: '2' })).runs[0]).toMatchObject({ verdict: 'ok', ends: 'waits' });
    // Once the run completed, version 2 diverges at the renamed step.
    const done = await checkWorkflowReplays({ agents, logs: [{ runId: 'wf-1', events: await completed() }], version: '2' });
    expect(done).toMatchObject({ diverged: 1, runs: [{ verdict: 'diverged', op: 7, expected: { name: 'charge' }, found: { name: 'capture' } }] });
    expect(await checkWorkflowReplays({ agents, logs: [{ runId: 'wf-1', events: await completed() }] })).toMatchObject({
      runs: [{ verdict: 'ok', ends: 'completed' }],
    });
    const missing = await checkWorkflowReplays({ agents, logs, version: '3' });
    expect(missing).toMatchObject({ missingVersion: 1, runs: [{ verdict: 'missing_version' }] });
    expect(ran.n).toBe(0);
  });
});

describe('logbook replay-check over workflow runs', () => {
  function capture(): Output & { stdout: string[]; stderr: string[] } {
    const stdout: string[] = [];
    const stderr: string[] = [];
    return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), tty: false };
  }

  it('replays a runs file against the pinned or a given version: a table, --json, exit 1 on divergence or a missing version', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'logbook-wf-replay-'));
    try {
      const file = join(dir, 'runs.jsonl');
      writeFileSync(file, `${JSON.stringify({ runId: 'wf-1', events: await completed() })}\n`);
      const ran = { n: 0 };
      const agents = defineAgents({ agents: [], workflows: [orders(ran), orders(ran, '2', 'capture')] });
      const deps = { loadAgents: () => Promise.resolve(agents) };

      const ok = capture();
      expect(await replayCommand(['--agents', 'agents.ts', '--file', file], ok, deps)).toBe(0);
      expect(ok.stdout.join('\n')).toMatch(/wf-1\s+orders@1\s+completed\s+ok \(completed\)/);
      expect(ok.stdout.join('\n')).toContain('1 workflow run: 1 ok, 0 diverged');

      const bad = capture();
      expect(await replayCommand(['--agents', 'agents.ts', '--file', file, '--version', '2'], bad, deps)).toBe(1);
      expect(bad.stdout.join('\n')).toContain('diverged at operation 7: expected step "charge", found step "capture"');

      const json = capture();
      expect(await replayCommand(['--agents', 'agents.ts', '--file', file, '--version', '9', '--json'], json, deps)).toBe(1);
      const report = JSON.parse(json.stdout.join('')) as { runs: unknown[]; workflows: { missingVersion: number; runs: { verdict: string }[] } };
      expect(report.runs).toEqual([]);
      expect(report.workflows).toMatchObject({ missingVersion: 1, runs: [{ verdict: 'missing_version' }] });
      expect(ran.n).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
