import { AgentRegistry, StaticModelResolver } from 'logbook';
import { ManualClock, memoryStorage, type WorldStorage } from 'logbook/testing';
import { GUARDED_MODEL_ID, guardedAgent, guardedModel } from './guarded-agent.js';
import { MemoryLedger, type Ledger } from './ledger.js';
import { SupportServices } from './services.js';
import type { SupportWorld } from './support-world.js';

/** A fresh world running `support-guarded` on in-memory storage (or the storage given). */
export function guardedWorld(storage: WorldStorage = memoryStorage(), ledger: Ledger = new MemoryLedger()): SupportWorld {
  const services = new SupportServices(ledger);
  return {
    storage,
    clock: new ManualClock(),
    registry: new AgentRegistry().register(guardedAgent(services)),
    models: new StaticModelResolver({ [GUARDED_MODEL_ID]: guardedModel() }),
    ledger,
    services,
  };
}
