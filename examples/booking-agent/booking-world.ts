/**
 * The booking agent in a test world (logbook/testing): memory storage, the scripted model, fresh
 * fake services per world, and the people around a run: the approver of charges and the operator
 * who answers a parked run.
 */
import { defineAgents } from 'logbook';
import { requestApproval } from 'logbook/engine';
import { agentsWorld, type HarnessScenario, type Outside, type Resolver, type World } from 'logbook/testing';
import { BOOKING_MODEL_ID, bookingAgent, bookingModel, type TripRequest } from './booking-agent.js';
import { MemoryStore } from './state-store.js';
import { TravelServices, emptyTravelState, type TravelEffect } from './travel-services.js';
import { travellerDirectory } from './travellers.js';

export interface BookingWorld extends World {
  services: TravelServices;
}

export function bookingWorld(): BookingWorld {
  const services = new TravelServices(new MemoryStore(emptyTravelState()));
  const agents = defineAgents({
    agents: [bookingAgent(services)],
    models: { [BOOKING_MODEL_ID]: () => bookingModel() },
    appContext: () => travellerDirectory(),
  });
  return { ...agentsWorld(agents), services };
}

/**
 * The travel manager: approves every charge the run waits on, as they would in the inspector or
 * with `logbook runs approve`. Looking at the head first makes asking again after a crash harmless;
 * an approval the run already has is a conflict, which is nothing to send.
 */
export function approveCharges(approver = 'travel-manager'): Outside {
  return async (head, deps) => {
    const wait = head.waits?.find((w) => w.kind === 'approval');
    if (!wait) return false;
    const run = { tenant: head.tenant, runId: head.runId };
    return requestApproval(deps, run, { callId: wait.callId, decision: 'approve', comment: 'within policy' }, approver).then(
      () => true,
      (error: unknown) => {
        if (String((error as { code?: unknown }).code ?? '').endsWith('_conflict')) return false;
        throw error;
      },
    );
  };
}

/**
 * The operator, for parks: a run parked by two crashes around one model call (the runaway guard)
 * is retried; a call with no result is looked up at the service by its key, and recorded as it
 * landed or rerun. No booking tool escalates, so the second case is a safety net.
 */
export function bookingResolver(world: BookingWorld): Resolver {
  return (attention, head) => {
    if (!attention.callId) return 'retry';
    const key = `${head.tenant}:${head.runId}:${attention.callId}`;
    const landed = world.services.effects().find((e) => e.key === key && e.applied && !e.readOnly);
    return landed ? { callId: attention.callId, outcome: 'succeeded', result: landed.detail as never } : { callId: attention.callId, outcome: 'rerun' };
  };
}

export const DEMO_TRIP: TripRequest = { travellerId: 't_ada', from: 'LHR', to: 'OSL', date: '2027-03-14', passengers: 2 };

export const bookingScenario: HarnessScenario<BookingWorld, TravelEffect> = {
  name: 'booking agent (search rerun, hold and ticket idempotency_key, approved charge verify)',
  world: bookingWorld,
  request: { tenant: 'acme', runId: 'trip-1', agent: 'booking', input: DEMO_TRIP },
  sideEffects: (world) => world.services.effects(),
  // One trip: a second hold, charge or ticketing applied, under any key, is a double booking or charge.
  onceKey: (e) => (e.readOnly || !e.applied ? undefined : `${e.service}:${e.op}`),
  resolver: bookingResolver,
  outside: () => approveCharges(),
};
