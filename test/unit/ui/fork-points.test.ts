// The inspector's fork points (dev/ui/client/fork-points.ts) against the API itself: for every seq
// of real logs (an approval, a rejection, a signal, a follow-up message, a cancel, a pending approval),
// the page offers a fork exactly where POST /runs/{id}/fork creates one, and disables every point
// the API refuses as "not a turn boundary".
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import type { Caller } from '../../../lib/api/tenant.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { waitForSignal } from '../../../lib/authoring/waits.js';
import type { ScriptedTurn } from '../../../lib/models/scripted-model.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { forkPoints } from '../../../dev/ui/client/fork-points.js';
import type { LogEvent } from '../../../dev/ui/client/types.js';
import { drain } from '../control/helpers.js';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { workflowWorld } from '../workflows/world.js';

function world() {
  const refund = defineTool({
    name: 'issue_refund',
    version: '1',
    description: 'Refund.',
    input: z.object({ orderId: z.string(), amountCents: z.number().int().positive() }),
    approval: 'always',
    execute: async (a) => ({ refunded: a.amountCents }),
  });
  const lookup = defineTool({
    name: 'lookup',
    version: '1',
    description: 'Look up.',
    input: z.object({ q: z.string() }),
    execute: async ({ q }) => ({ found: q }),
  });
  const wait = waitForSignal({
    name: 'wait_for_return',
    description: 'Wait.',
    signal: 'parcel_returned',
    payload: z.object({ trackingId: z.string() }),
    timeoutSeconds: 600,
  });
  return scriptedWorld({
    tools: [refund, lookup, wait],
    script: [
      (r): ScriptedTurn => {
        const task = r.messages[0]?.role === 'user' ? r.messages[0].content : '';
        if (task.includes('wait'))
          return {
            text: 'waiting',
            calls: [
              { name: 'lookup', args: { q: 'order' } },
              { name: 'wait_for_return', args: {} },
            ],
          };
        return {
          text: 'refunding',
          calls: [
            { name: 'lookup', args: { q: 'order' } },
            { name: 'issue_refund', args: { orderId: 'o-1', amountCents: 4500 } },
          ],
        };
      },
      { text: 'done' },
      { text: 'follow-up answered' },
    ],
  });
}

/** The API app over a world's engine, called as a client would. */
function apiOf(deps: Parameters<typeof engineRunService>[0]) {
  const app = createApiApp({ service: engineRunService(deps), caller: (): Caller => ({ tenant: 't', principal: 'p' }) });
  return async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, {
      method,
      ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are inspected loosely
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
}

/** Every fork point the page offers for these runs, asked of the API: counts of the accepted and the refused. */
async function matchApi(call: ReturnType<typeof apiOf>, runIds: string[]): Promise<{ offered: number; refused: number }> {
  let offered = 0;
  let refused = 0;
  for (const runId of runIds) {
    const events = (await call('GET', `/runs/${runId}/events?limit=500`)).body.events as LogEvent[];
    const points = forkPoints(events);
    expect(points.map((p) => p.seq)).toEqual(events.map((e) => e.seq));
    for (const point of points) {
      const out = await call('POST', `/runs/${runId}/fork`, { atSeq: point.seq, runId: `f-${runId}-${point.seq}` });
      const where = `${runId} at seq ${point.seq} (${point.type}): the page says ${point.ok ? 'ok' : point.reason}, the API ${out.status} ${out.body.error?.message ?? ''}`;
      expect(out.status === 201, where).toBe(point.ok);
      if (!point.ok) expect(out.status, where).toBe(409);
      if (point.ok) offered++;
      else refused++;
    }
  }
  return { offered, refused };
}

describe('fork points offered by the inspector', () => {
  it('are exactly the seqs the API forks at, in every kind of log', async () => {
    const t = world();
    const call = apiOf(t.worker.deps);
    const start = async (runId: string, input: string) => {
      expect((await call('POST', '/runs', { agent: 'agent', input, runId })).status).toBe(201);
      await drain(t.world, t.worker);
    };
    const waitOf = async (runId: string) => (await call('GET', `/runs/${runId}`)).body.waiting[0] as { callId: string; argsHash?: string };

    await start('approved', 'refund it');
    const a = await waitOf('approved');
    await call('POST', '/runs/approved/approve', { callId: a.callId, decision: 'approve', argsHash: a.argsHash });
    await drain(t.world, t.worker);
    await call('POST', '/runs/approved/messages', { input: 'and then?' });
    await drain(t.world, t.worker);

    await start('rejected', 'refund it');
    await call('POST', '/runs/rejected/approve', { callId: (await waitOf('rejected')).callId, decision: 'reject', comment: 'no' });
    await drain(t.world, t.worker);

    await start('signalled', 'please wait');
    await call('POST', '/runs/signalled/signals', { signal: 'parcel_returned', payload: { trackingId: 'T-1' } });
    await drain(t.world, t.worker);

    await start('cancelled', 'please wait');
    await call('POST', '/runs/cancelled/cancel', { reason: 'stop' });
    await drain(t.world, t.worker);

    await start('pending', 'refund it'); // still awaiting approval: nothing after the request is a boundary

    const { offered } = await matchApi(call, ['approved', 'rejected', 'signalled', 'cancelled', 'pending']);
    // Not a vacuous match: boundaries beyond seq 1 were offered and accepted.
    expect(offered).toBeGreaterThan(5);
  });

  it('of a workflow run are exactly the seqs the API forks at: 1, and wherever every operation has its result', async () => {
    const flow = defineWorkflow({
      name: 'ship',
      version: '1',
      async run(ctx) {
        const charged = await ctx.step('charge', () => 1200, { policy: 'idempotency_key' });
        const [a, b] = await ctx.all([
          ctx.step('pack', () => 'box', { policy: 'rerun' }),
          ctx.step('label', () => 'L-1', { policy: 'verify', verify: async () => ({ status: 'not_landed' as const }) }),
        ]);
        const shipped = await ctx.waitForSignal('shipped', { payload: z.object({ tracking: z.string() }), timeoutSeconds: 3600 });
        return { charged, a, b, tracking: shipped.timedOut ? null : shipped.payload.tracking };
      },
    });
    const t = workflowWorld({ workflows: [flow] });
    const call = apiOf(t.worker.deps);
    expect((await call('POST', '/runs', { workflow: 'ship', input: {}, runId: 'done' })).status).toBe(201);
    await drain(t.world, t.worker);
    await call('POST', '/runs/done/signals', { signal: 'shipped', payload: { tracking: 'T-1' } });
    await drain(t.world, t.worker);
    expect((await call('POST', '/runs', { workflow: 'ship', input: {}, runId: 'waiting' })).status).toBe(201);
    await drain(t.world, t.worker);

    const { offered, refused } = await matchApi(call, ['done', 'waiting']);
    // Boundaries past seq 1 and refusals mid-operation both occurred.
    expect(offered).toBeGreaterThan(3);
    expect(refused).toBeGreaterThan(3);
  });
});
