import type { EventBridgeEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { triggerHandlerFor, runIdForEvent } from '../../../lib/lambda/trigger-handler.js';
import { METRIC } from '../../../lib/lambda/telemetry.js';
import type { Runtime } from '../../../lib/lambda/wiring.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { agentWorld, nothingWritten } from './agent-world.js';

const state = { explode: false };
const booker = defineAgent({
  name: 'booker',
  version: '1',
  model: { id: 'scripted:test', maxOutputTokens: 64 },
  input: z.object({ nights: z.number().int().positive() }),
  system: {
    version: 's',
    text: (i) => {
      if (state.explode) throw new Error('boom');
      return `Book ${i.nights}.`;
    },
  },
  tools: [],
});

function setup() {
  const w = agentWorld([booker], { 'scripted:test': new ScriptedModel([{ text: 'ok' }]) });
  const metrics: string[] = [];
  const lines: { message: string; fields?: Record<string, unknown> }[] = [];
  const log = (message: string, fields?: Record<string, unknown>) => lines.push({ message, ...(fields ? { fields } : {}) });
  const runtime = {
    engine: w.worker.deps,
    logger: { resetKeys() {}, appendKeys() {}, info: log, warn: log, error: log },
    metrics: { addMetric: (name: string) => metrics.push(name), hasStoredMetrics: () => false, publishStoredMetrics() {} },
  } as unknown as Runtime;
  const handler = triggerHandlerFor(async () => runtime);
  const event = (id: string, detail: unknown) => ({ id, account: '123456789012', source: 'app', 'detail-type': 'Agent Run Requested', detail }) as unknown as EventBridgeEvent<string, unknown>;
  return { ...w, metrics, lines, handler, event };
}

describe('the EventBridge trigger and typed input', () => {
  it('drops an event whose input does not fit: logged with the paths (not the values), counted, nothing written', async () => {
    const { world, handler, event, metrics, lines } = setup();
    const out = await handler(event('e1', { agent: 'booker', input: { nights: -2 } }));
    expect(out).toMatchObject({ dropped: 'validation_error' });
    expect(metrics).toEqual([METRIC.RunRequestsRejected]);
    const line = lines.find((l) => l.message.startsWith('event dropped'));
    expect(line?.fields?.issues).toEqual([{ path: 'input.nights', message: expect.any(String) }]);
    expect(JSON.stringify(lines)).not.toContain('-2');
    expect(await nothingWritten(world, { tenant: '123456789012', runId: runIdForEvent('123456789012', 'e1') })).toBe(true);
  });

  it('drops and counts an event whose instructions throw; a good event starts its run', async () => {
    const { handler, event, metrics } = setup();
    state.explode = true;
    try {
      expect(await handler(event('e2', { agent: 'booker', input: { nights: 2 } }))).toMatchObject({ dropped: 'instructions_failed' });
    } finally {
      state.explode = false;
    }
    expect(metrics).toEqual([METRIC.RunRequestsRejected]);
    expect(await handler(event('e3', { agent: 'booker', input: { nights: 2 } }))).toMatchObject({ created: true });
    expect(metrics).toEqual([METRIC.RunRequestsRejected, METRIC.RunsStarted]);
  });
});
