// The CLI on workflow runs, against the real API app over a memory world, served over HTTP: start
// by --workflow, show with the operations table (and --json with them), signal (and its refusals),
// watch printing op lines, workflows listing, cancel and fork.
import { mkdtemp, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startWorkflowHint } from '../../../dev/cli/example-input.js';
import { main } from '../../../dev/cli/main.js';
import type { Output } from '../../../dev/cli/output.js';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { drain } from '../control/helpers.js';
import { shellWords } from '../../fixtures/readme-commands.js';
import { workflowWorld } from '../workflows/world.js';

const shipOrder = defineWorkflow({
  name: 'ship-order',
  version: '1',
  description: 'charge, then wait for the warehouse',
  input: z.object({ orderId: z.string() }),
  async run(ctx, input) {
    const cents = await ctx.step('charge', () => (input.orderId === 'o-1' ? 1200 : 0), { policy: 'idempotency_key' });
    const shipped = await ctx.waitForSignal('shipped', { payload: z.object({ tracking: z.string() }), timeoutSeconds: 86_400 });
    return { cents, tracking: shipped.timedOut ? null : shipped.payload.tracking };
  },
});
const refund = defineWorkflow({
  name: 'refund',
  version: '1',
  async run(ctx) {
    const approval = await ctx.approval('send refund', { args: { cents: 500 }, schema: z.object({ cents: z.number() }) });
    return approval.approved ? approval.args.cents : 0;
  },
});
const waiter = defineWorkflow({
  name: 'waiter',
  version: '1',
  async run(ctx) {
    await ctx.waitForSignal('go', { payload: z.object({}), timeoutSeconds: 86_400 });
    return 'went';
  },
});
const parent = defineWorkflow({
  name: 'parent',
  version: '1',
  async run(ctx) {
    return ctx.workflow(waiter, {});
  },
});

function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), tty: false };
}

describe('logbook on workflow runs, over HTTP', () => {
  let t: ReturnType<typeof workflowWorld>;
  let server: ReturnType<typeof serve>;
  let api: string;
  const cli = async (...argv: string[]) => {
    const io = capture();
    const code = await main([...argv, '--api', api], io);
    return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n'), io };
  };
  const settle = () => drain(t.world, t.worker);

  beforeEach(async () => {
    t = workflowWorld({ workflows: [shipOrder, refund, waiter, parent] });
    const app = createApiApp({ service: engineRunService(t.worker.deps), caller: () => ({ tenant: 't1', principal: 'alice' }) });
    server = await new Promise((ok) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ok(s));
    });
    api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    await new Promise((r) => server.close(r));
  });

  it('starts a run by --workflow, shows its operations, completes its wait by `logbook signal`, and watch prints the op lines', async () => {
    const start = await cli('runs', 'start', '--workflow', 'ship-order', '--version', '1', '--input', '{"orderId":"o-1"}', '--run-id', 'wf-1');
    expect(start.code, start.err).toBe(0);
    expect(start.out).toMatch(/^run\s+wf-1$/m);
    expect(start.out).toMatch(/^created\s+yes$/m);
    await settle();

    // The operations table: the charge step done, the signal wait open.
    const shown = await cli('runs', 'show', 'wf-1');
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toMatch(/^workflow\s+ship-order@1$/m);
    expect(shown.out).toMatch(/operations:\nOP\s+KIND\s+NAME\s+STATUS\s+ATTEMPTS\s+STARTED\s+ENDED\s+CHILD RUN\s+DETAIL\n[- ]+\n/);
    expect(shown.out).toMatch(/^1\s+step\s+charge\s+succeeded\s+1\s+\S+ \S+Z\s+\S+ \S+Z\s+from step: 1200$/m);
    expect(shown.out).toMatch(/^2\s+signal\s+shipped\s+started\s+1\s+\S+ \S+Z\s+waits for signal shipped until \S+ \S+Z$/m);

    // --json: the run view with its operations as GET /runs/{id}/operations gives them.
    const json = await cli('runs', 'show', 'wf-1', '--json');
    const view = JSON.parse(json.out) as { kind: string; status: string; operations: Record<string, unknown>[] };
    expect(view).toMatchObject({ runId: 'wf-1', kind: 'workflow', status: 'waiting', workflow: { name: 'ship-order', version: '1' } });
    expect(view.operations).toEqual([
      expect.objectContaining({
        op: 1,
        callId: 'op-1',
        kind: 'step',
        name: 'charge',
        status: 'succeeded',
        attempt: 1,
        result: 1200,
        policy: 'idempotency_key',
      }),
      expect.objectContaining({ op: 2, callId: 'op-2', kind: 'signal', name: 'shipped', status: 'started', waitsFor: { kind: 'signal', signal: 'shipped' } }),
    ]);

    // A signal nobody waits for, and a payload that misfits: exit 1, the API's code and what to do.
    const nobody = await cli('signal', 'wf-1', 'delivered', '--payload', '{"tracking":"T-1"}');
    expect(nobody.code).toBe(1);
    expect(nobody.err).toMatch(/^logbook: 409 signal_not_awaited: .*"shipped"/);
    expect(nobody.err).toContain('nothing was queued; `logbook runs show wf-1` lists what the run waits for');
    const misfit = await cli('signal', 'wf-1', 'shipped', '--payload', '{"tracking":5}');
    expect(misfit.code).toBe(1);
    expect(misfit.err).toMatch(/^logbook: 400 \w+: .*body\.payload/);
    expect(misfit.err).toContain('the payload must fit the schema');
    expect(await t.world.storage.inbox.list(t.run)).toEqual([]);

    // The payload from a file (@PATH).
    const dir = await mkdtemp(join(tmpdir(), 'logbook-signal-'));
    await writeFile(join(dir, 'shipped.json'), '{"tracking":"TRK-9"}');
    const sent = await cli('signal', 'wf-1', 'shipped', '--payload', `@${join(dir, 'shipped.json')}`);
    expect(sent.code, sent.err).toBe(0);
    expect(sent.out).toBe('signal shipped queued for call op-2 of wf-1 (inbox signal-op-2)');
    await settle();

    const done = JSON.parse((await cli('runs', 'show', 'wf-1', '--json')).out) as { status: string; output: unknown; operations: Record<string, unknown>[] };
    expect(done).toMatchObject({ status: 'completed', output: { cents: 1200, tracking: 'TRK-9' } });
    expect(done.operations[1]).toMatchObject({ status: 'succeeded', source: 'signal', sentBy: 'alice', result: { tracking: 'TRK-9' } });

    // watch: every event a line, the operations said in words, and the count of operations.
    const watched = await cli('runs', 'watch', 'wf-1');
    expect(watched.code, watched.err).toBe(0);
    const lines = watched.io.stdout;
    expect(lines[0]).toMatch(/^ {4}1 run_started {8}ship-order@1/);
    expect(lines).toContainEqual(expect.stringMatching(/^ +\d+ op_started +op 1 step charge started \(idempotency_key\)$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ +\d+ op_result +op 1 step charge succeeded from step: 1200$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ +\d+ op_started +op 2 signal shipped started; waits for signal shipped until \d{4}-\d\d-\d\dT/));
    expect(lines).toContainEqual(expect.stringMatching(/^ +\d+ op_result +op 2 signal shipped succeeded from signal by alice: \{"tracking":"TRK-9"\}$/));
    expect(lines.at(-1)).toMatch(/run_completed/);
    expect(watched.err).toMatch(/watching wf-1 \(workflow ship-order@1, completed\)/);
    expect(watched.err).toContain('Status: completed after 2 operations');
  });

  it('`runs signal RUN_ID NAME` takes the name as a positional too, and refuses it twice or missing', async () => {
    await cli('runs', 'start', '--workflow', 'ship-order', '--input', '{"orderId":"o-2"}', '--run-id', 'wf-1');
    await settle();
    const twice = await cli('runs', 'signal', 'wf-1', 'shipped', '--signal', 'shipped');
    expect(twice.code).toBe(2);
    expect(twice.err).toContain('name the signal once');
    const none = await cli('signal', 'wf-1');
    expect(none.code).toBe(2);
    expect(none.err).toContain('signal needs a NAME');
    const badFile = await cli('signal', 'wf-1', 'shipped', '--payload', '@/nonexistent/payload.json');
    expect(badFile.code).toBe(2);
    expect(badFile.err).toContain('no such file');
    const sent = await cli('runs', 'signal', 'wf-1', 'shipped', '--payload', '{"tracking":"T"}', '--json');
    expect(sent.code, sent.err).toBe(0);
    expect(JSON.parse(sent.out)).toEqual({ runId: 'wf-1', accepted: true, inboxId: 'signal-op-2', callId: 'op-2' });
  });

  it('start needs exactly one of an agent and --workflow, and prints the run id as JSON with --json', async () => {
    const both = await cli('runs', 'start', 'support', '--workflow', 'ship-order', '--input', '{}');
    expect(both.code).toBe(2);
    expect(both.err).toContain('give an agent or --workflow NAME, not both');
    const bothFlags = await cli('runs', 'start', '--agent', 'support', '--workflow', 'ship-order', '--input', '{}');
    expect(bothFlags.code).toBe(2);
    expect(bothFlags.err).toContain('not both');
    const neither = await cli('runs', 'start', '--input', '{}');
    expect(neither.code).toBe(2);
    expect(neither.err).toContain('needs an AGENT (or --agent NAME) or --workflow NAME');
    // An input the workflow's schema refuses: the API's 400, naming the field.
    const misfit = await cli('runs', 'start', '--workflow', 'ship-order', '--input', '{"order":1}');
    expect(misfit.code).toBe(1);
    expect(misfit.err).toMatch(/400 .*orderId/);
    const json = await cli('runs', 'start', '--workflow', 'ship-order', '--input', '{"orderId":"o-1"}', '--run-id', 'wf-j', '--json');
    expect(json.code, json.err).toBe(0);
    expect(JSON.parse(json.out)).toEqual({ runId: 'wf-j', status: 'running', created: true });
  });

  it('lists the workflows, and shows a child run in the operations table', async () => {
    const listed = await cli('workflows');
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toMatch(/^WORKFLOW\s+VERSION\s+LATEST\s+INPUT\s+DESCRIPTION$/m);
    expect(listed.out).toMatch(/^ship-order\s+1\s+yes\s+schema [0-9a-f]{12}\s+charge, then wait for the warehouse$/m);
    expect(listed.out).toMatch(/^waiter\s+1\s+yes\s+any$/m);
    const json = JSON.parse((await cli('workflows', '--json')).out) as { workflows: { workflow: string }[] };
    expect(json.workflows.map((w) => w.workflow).sort()).toEqual(['parent', 'refund', 'ship-order', 'waiter']);

    await cli('runs', 'start', '--workflow', 'parent', '--input', '{}', '--run-id', 'wf-p');
    await settle();
    const listed2 = await cli('runs', 'list');
    expect(listed2.out).toMatch(/^wf-p\s+waiting\s+parent@1 \(workflow\)/m);
    expect(listed2.out).toMatch(/^wf-p-cop-1\s+waiting\s+waiter@1 \(workflow\)/m);
    const shown = await cli('runs', 'show', 'wf-p');
    expect(shown.out).toMatch(/^1\s+child\s+waiter\s+started\s+1\s+\S+ \S+Z\s+wf-p-cop-1\s+waits for child/m);
  });

  it("approves a workflow's approval operation by its call id op-<n>", async () => {
    await cli('runs', 'start', '--workflow', 'refund', '--input', '{}', '--run-id', 'wf-r');
    await settle();
    const shown = await cli('runs', 'show', 'wf-r');
    expect(shown.out).toMatch(/^1\s+approval\s+send refund\s+started\s+1\s+\S+ \S+Z\s+waits for approval/m);
    const approved = await cli('runs', 'approve', 'wf-r', '--call', 'op-1', '--decision', 'edit', '--args', '{"cents":300}');
    expect(approved.code, approved.err).toBe(0);
    expect(approved.out).toMatch(/^edit queued for call op-1 of wf-r/);
    await settle();
    const done = JSON.parse((await cli('runs', 'show', 'wf-r', '--json')).out) as { status: string; output: unknown; operations: Record<string, unknown>[] };
    expect(done).toMatchObject({ status: 'completed', output: 300 });
    expect(done.operations[0]).toMatchObject({ kind: 'approval', status: 'succeeded', source: 'human', sentBy: 'alice' });
  });

  it('cancels a workflow run waiting for a signal', async () => {
    await cli('runs', 'start', '--workflow', 'ship-order', '--input', '{"orderId":"o-1"}', '--run-id', 'wf-1');
    await settle();
    const cancel = await cli('runs', 'cancel', 'wf-1', '--reason', 'customer left');
    expect(cancel.code, cancel.err).toBe(0);
    expect(cancel.out).toMatch(/^cancel requested for wf-1/);
    await settle();
    const watched = await cli('runs', 'watch', 'wf-1');
    expect(watched.code).toBe(4);
    expect(watched.io.stdout).toContainEqual(expect.stringMatching(/cancel_requested +by alice: customer left$/));
    expect(watched.io.stdout.at(-1)).toMatch(/run_cancelled/);
  });

  it('forks a workflow run before an operation (--before-op) or at a seq; a point with an operation in flight is the API 409 naming it', async () => {
    await cli('runs', 'start', '--workflow', 'ship-order', '--input', '{"orderId":"o-1"}', '--run-id', 'wf-1');
    await settle();
    await cli('signal', 'wf-1', 'shipped', '--payload', '{"tracking":"T"}');
    await settle();
    // Before operation 2 (the signal wait): the charge is copied, the fork waits for its own signal.
    const before = await cli('runs', 'fork', 'wf-1', '--before-op', '2', '--run-id', 'fk-2', '--json');
    expect(before.code, before.err).toBe(0);
    const ops = await cli('runs', 'show', 'wf-1', '--json');
    const signalOp = (JSON.parse(ops.out) as { operations: { op: number; seq: number }[] }).operations.find((o) => o.op === 2)!;
    expect(JSON.parse(before.out)).toMatchObject({ runId: 'fk-2', created: true, forkedFrom: { runId: 'wf-1', seq: signalOp.seq - 1 } });
    await settle();
    const forked = await cli('runs', 'show', 'fk-2', '--json');
    expect(JSON.parse(forked.out)).toMatchObject({ status: 'waiting', kind: 'workflow' });
    await cli('signal', 'fk-2', 'shipped', '--payload', '{"tracking":"U"}');
    await settle();
    expect(JSON.parse((await cli('runs', 'show', 'fk-2', '--json')).out)).toMatchObject({ status: 'completed', output: { cents: 1200, tracking: 'U' } });
    // The charge's started marker: its step was in flight there.
    const mid = await cli('runs', 'fork', 'wf-1', '--at', '2', '--run-id', 'fk-mid');
    expect(mid.code).toBe(1);
    expect(mid.err).toMatch(/^logbook: 409 fork_conflict: seq 2 is not a fork point: operation 1 \(step charge\) is in flight there; fork at seq 1/);
    expect(await t.world.storage.heads.getHead({ tenant: 't1', runId: 'fk-mid' })).toBeUndefined();
    const none = await cli('runs', 'fork', 'wf-1', '--before-op', '9');
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/wf-1 has no operation 9 \(it has 1 to 2\)/);
  });

  it('`logbook help` shows the workflow commands', async () => {
    const io = capture();
    expect(await main(['help'], io)).toBe(0);
    const usage = io.stdout.join('\n');
    expect(usage).toContain('logbook workflows [--api URL] [--json]');
    expect(usage).toContain('logbook runs start --workflow NAME');
    expect(usage).toContain('logbook signal RUN_ID NAME [--payload JSON|@PATH]');
    expect(usage).toContain('a workflow run: with its operations');
  });

  it("the dev banner's start line for a workflow starts a run of it as the shell splits it", async () => {
    const hint = startWorkflowHint(shipOrder, '');
    expect(hint).toMatch(/^npx logbook runs start --workflow ship-order --input '\{"orderId":.*\}'$/);
    const [, , ...argv] = shellWords(hint);
    const started = await cli(...argv, '--run-id', 'wf-h');
    expect(started.code, started.err).toBe(0);
    expect(started.out).toMatch(/^run\s+wf-h$/m);
  });
});
