import { describe, expect, it } from 'vitest';
import { ManualClock, memoryStorage, runCrashHarness, type HarnessScenario, type World } from 'logbook/testing';
import { createAgents } from '../src/agents.js';
import { OpsServices, type SideEffect } from '../src/services.js';

interface OpsWorld extends World {
  services: OpsServices;
}

/** The incident-review workflow (and the ops agent it calls) on in-memory storage, fresh services for every crash point. */
const scenario: HarnessScenario<OpsWorld, SideEffect> = {
  name: 'incident-review workflow: look up (rerun), the ops agent (a child run), sleep, look again',
  world() {
    const services = new OpsServices();
    // An empty environment: always the scripted model, whatever LOGBOOK_MODEL says.
    const agents = createAgents(services, {});
    return {
      storage: memoryStorage(),
      clock: new ManualClock(),
      registry: agents.registry,
      models: { resolve: (modelId) => agents.model(modelId) },
      services,
    };
  },
  request: { tenant: 'acme', runId: 'harness-wf-1', workflow: 'incident-review', input: { service: 'checkout', recheckAfterSeconds: 60 } },
  sideEffects: (world) => world.services.effects(),
  // Two crashes around one of the child agent's model calls park it as model_stalled; an operator retries.
  resolver: () => (attention) => (attention.callId ? undefined : 'retry'),
};

describe('the incident-review workflow under crashes', () => {
  it('holds at every crash point, pair of crashes and frozen worker: one restart, the same output', { timeout: 180_000 }, async () => {
    const report = await runCrashHarness(scenario);
    const failed = report.points.filter((p) => !p.held);
    console.info(`workflow crash harness: ${report.points.length} points, ${report.held} held, ${report.failed} failed`);
    expect(report.baseline.status).toBe('completed');
    expect(JSON.parse(report.baseline.answer)).toMatchObject({
      service: 'checkout',
      handedToAgent: true,
      answer: expect.stringContaining('Restarted checkout'),
    });
    expect(report.points.length).toBeGreaterThan(report.baseline.checkpoints);
    expect(failed, JSON.stringify(failed.slice(0, 3), null, 2)).toEqual([]);
  });
});
