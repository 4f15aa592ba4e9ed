import { idempotencyKey, StaticModelResolver } from 'logbook';
import { AgentRegistry } from 'logbook/engine';
import { ManualClock, memoryStorage, type HarnessScenario, type Resolver, type World, type WorldStorage } from 'logbook/testing';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from './agent.js';
import { MemoryLedger, type Ledger, type SideEffect } from './ledger.js';
import { SupportServices } from './services.js';

export interface SupportWorld extends World {
  ledger: Ledger;
  services: SupportServices;
}

/** A fresh world running the demo support agent on in-memory storage (or the storage given). */
export function supportWorld(storage: WorldStorage = memoryStorage(), ledger: Ledger = new MemoryLedger()): SupportWorld {
  const clock = new ManualClock();
  // The services check request deadlines on the world's clock, as a real service on synced time.
  const services = new SupportServices(ledger, { now: () => clock.now() });
  const registry = new AgentRegistry().register(supportAgent(services));
  return {
    storage,
    clock,
    registry,
    models: new StaticModelResolver({ [SUPPORT_MODEL_ID]: supportModel() }),
    ledger,
    services,
  };
}

/**
 * The scripted person for escalations: look in the payments ledger whether the refund of that
 * call landed; if it did, record its result; if not, approve a rerun. Run-level parks get retry.
 */
export function ledgerResolver(world: SupportWorld): Resolver {
  return (attention, head) => {
    if (!attention.callId) return 'retry';
    const key = idempotencyKey(head, attention.callId);
    const landed = world.ledger.all().find((e) => e.key === key && e.applied && !e.readOnly);
    if (landed) return { callId: attention.callId, outcome: 'succeeded', result: landed.detail as never };
    return { callId: attention.callId, outcome: 'rerun' };
  };
}

/** The demo's crash-harness scenario: a damaged order, refunded, ticketed and emailed. */
export const supportScenario: HarnessScenario<SupportWorld, SideEffect> = {
  name: 'support agent (rerun, idempotency_key, verify, escalate; parallel calls)',
  world: () => supportWorld(),
  request: { tenant: 'acme', runId: 'harness-1', agent: 'support', input: 'Customer c_77 reports a damaged order. Sort it out.' },
  sideEffects: (world) => world.ledger.all(),
  onceKey: (e) => (e.readOnly || !e.applied ? undefined : `${e.service}:${e.op}:${e.key}`),
  resolver: (world) => ledgerResolver(world),
};
