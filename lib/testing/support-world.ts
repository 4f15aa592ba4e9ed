import { ManualClock } from '../adapters/memory/manual-clock.js';
import { AgentRegistry } from '../engine/agents.js';
import { StaticModelResolver } from '../models/scripted-model.js';
import { MemoryLedger, type Ledger } from '../../examples/support-agent/ledger.js';
import { SupportServices } from '../../examples/support-agent/services.js';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from '../../examples/support-agent/agent.js';
import { memoryStorage, type World, type WorldStorage } from './world.js';
import type { Resolver } from './driver.js';

export interface SupportWorld extends World {
  ledger: Ledger;
  services: SupportServices;
}

/** A fresh world running the demo support agent on in-memory storage (or the storage given). */
export function supportWorld(storage: WorldStorage = memoryStorage(), ledger: Ledger = new MemoryLedger()): SupportWorld {
  const services = new SupportServices(ledger);
  const registry = new AgentRegistry().register(supportAgent(services));
  return {
    storage,
    clock: new ManualClock(),
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
    const key = `${head.tenant}:${head.runId}:${attention.callId}`;
    const landed = world.ledger.all().find((e) => e.key === key && e.applied && !e.readOnly);
    if (landed) return { callId: attention.callId, outcome: 'succeeded', result: landed.detail as never };
    return { callId: attention.callId, outcome: 'rerun' };
  };
}
