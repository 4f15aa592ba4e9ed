import { describe, expect, it } from 'vitest';
import { ManualClock, memoryStorage, runCrashHarness, type HarnessScenario, type World } from 'logbook/testing';
import { createAgents } from '../src/agents.js';
import { OpsServices, type SideEffect } from '../src/services.js';

interface OpsWorld extends World {
  services: OpsServices;
}

/** The ops agent on in-memory storage, with fresh fake services for every crash point. */
const scenario: HarnessScenario<OpsWorld, SideEffect> = {
  name: 'ops agent: lookup_service (rerun), restart_service (idempotency_key)',
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
  request: { tenant: 'acme', runId: 'harness-1', agent: 'ops', input: 'checkout is returning 500s' },
  sideEffects: (world) => world.services.effects(),
  // The scripted person: two crashes around one model call park the run as model_stalled (the
  // runaway guard), and an operator answers that with retry. The ops tools never escalate.
  resolver: () => (attention) => (attention.callId ? undefined : 'retry'),
};

describe('the ops agent under crashes', () => {
  it('holds at every crash point, pair of crashes and frozen worker', { timeout: 120_000 }, async () => {
    const report = await runCrashHarness(scenario);
    const failed = report.points.filter((p) => !p.held);
    console.info(`crash harness: ${report.points.length} points, ${report.held} held, ${report.failed} failed`);
    expect(report.baseline.status).toBe('completed');
    expect(report.baseline.answer).toContain('Restarted checkout');
    expect(report.points.length).toBeGreaterThan(report.baseline.checkpoints);
    expect(failed, JSON.stringify(failed.slice(0, 3), null, 2)).toEqual([]);
  });
});
