// The EventBridge trigger starts workflows (`detail.workflow`) as it starts agents, and the
// outcome events of a workflow run name the workflow and the version it pinned.
import type { EventBridgeEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { outcomeDetail } from '../../../lib/adapters/aws/eventbridge-publisher.js';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';
import { triggerHandlerFor, runIdForEvent } from '../../../lib/lambda/trigger-handler.js';
import type { OutcomeNotice } from '../../../lib/ports/outcome-publisher.js';
import type { Runtime } from '../../../lib/lambda/wiring.js';
import { nothingWritten } from '../agents/agent-world.js';
import { drain } from '../control/helpers.js';
import { logOf } from '../engine/helpers.js';
import { workflowWorld } from './world.js';

const greet = defineWorkflow({
  name: 'greet',
  version: '3',
  input: z.object({ name: z.string() }),
  output: z.object({ text: z.string() }),
  async run(ctx, input) {
    const text = await ctx.step('compose', () => `hello ${input.name}`, { policy: 'rerun' });
    return { text };
  },
});

const tenant = '123456789012';

function setup() {
  const t = workflowWorld({ workflows: [greet] });
  const lines: { message: string; fields?: Record<string, unknown> }[] = [];
  const log = (message: string, fields?: Record<string, unknown>) => lines.push({ message, ...(fields ? { fields } : {}) });
  const runtime = {
    engine: t.worker.deps,
    logger: { resetKeys() {}, appendKeys() {}, info: log, warn: log, error: log },
    metrics: { addMetric() {}, hasStoredMetrics: () => false, publishStoredMetrics() {} },
  } as unknown as Runtime;
  const handler = triggerHandlerFor(async () => runtime);
  const event = (id: string, detail: unknown) =>
    ({ id, account: tenant, source: 'app', 'detail-type': 'Agent Run Requested', detail }) as unknown as EventBridgeEvent<string, unknown>;
  return { ...t, lines, handler, event };
}

describe('the EventBridge trigger and workflows', () => {
  it('starts a workflow from detail.workflow, once per event id; its outcome notice names the workflow', async () => {
    const t = setup();
    const runId = runIdForEvent(tenant, 'e1');
    expect(await t.handler(t.event('e1', { workflow: 'greet', input: { name: 'ada' } }))).toEqual({ runId, created: true });
    expect(await t.handler(t.event('e1', { workflow: 'greet', input: { name: 'ada' } }))).toEqual({ runId, created: false });
    await drain(t.world, t.worker);
    const run = { tenant, runId };
    const { state } = await logOf(t.world, run);
    expect(state.started.workflow).toBeDefined();
    expect(state.outcome).toMatchObject({ type: 'completed', output: { kind: 'inline', value: { text: 'hello ada' } } });
    const notices = t.world.storage.publisher?.notices as OutcomeNotice[];
    const notice = notices.find((n) => n.runId === runId)!;
    expect(notice).toMatchObject({ detailType: 'Agent Run Completed', workflow: { name: 'greet', version: '3' }, output: { text: 'hello ada' } });
    // What a subscriber reads on the bus.
    expect(outcomeDetail(notice)).toMatchObject({ id: `${runId}:${notice.seq}`, workflow: { name: 'greet', version: '3' } });
  });

  it('drops a detail that names both an agent and a workflow, or neither, naming the field; and input that does not fit', async () => {
    const t = setup();
    expect(await t.handler(t.event('e2', { agent: 'x', workflow: 'greet', input: { name: 'a' } }))).toEqual({ dropped: 'detail' });
    expect(t.lines.find((l) => l.message === 'event dropped: invalid detail')?.fields?.issues).toEqual([
      { path: 'detail.workflow', message: expect.any(String) },
    ]);
    expect(await t.handler(t.event('e3', { input: { name: 'a' } }))).toEqual({ dropped: 'detail' });
    expect(await t.handler(t.event('e4', { workflow: 'greet', input: { name: 7 } }))).toMatchObject({ dropped: 'validation_error' });
    expect(await t.handler(t.event('e5', { workflow: 'nope', input: {} }))).toMatchObject({ dropped: 'validation_error' });
    for (const id of ['e2', 'e3', 'e4', 'e5']) expect(await nothingWritten(t.world, { tenant, runId: runIdForEvent(tenant, id) })).toBe(true);
  });

  it("an agent run's notice carries no workflow", () => {
    const notice: OutcomeNotice = { tenant, runId: 'r', detailType: 'Agent Run Completed', seq: 3, status: 'completed', summary: 'ok' };
    expect(outcomeDetail(notice)).not.toHaveProperty('workflow');
  });
});
