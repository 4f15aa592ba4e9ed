/**
 * Evals of the booking agent (docs/guides/evals.md): trips recorded in a test world, and the
 * candidate agents an eval replays them against. `candidateAgents({ reword: true })` plants a
 * prompt change (the card line reworded) that the scripted model, reading the prompt as a real
 * model would, no longer understands: the eval must catch it.
 */
import { defineAgent, defineAgents, type Agents } from 'logbook';
import { startRun } from 'logbook/engine';
import { driveRun, exportRuns, spawnWorker, type ExportedRun } from 'logbook/testing';
import { BOOKING_MODEL_ID, bookingAgent, bookingModel, type TripRequest } from './booking-agent.js';
import { approveCharges, bookingResolver, bookingWorld, type BookingWorld } from './booking-world.js';
import { MemoryStore } from './state-store.js';
import { TravelServices, emptyTravelState, type TravelEffect } from './travel-services.js';
import { DEMO_TRAVELLERS, travellerDirectory, type BookingApp } from './travellers.js';

const ROUTES = [
  ['LHR', 'OSL'],
  ['CDG', 'FCO'],
  ['AMS', 'BCN'],
  ['FRA', 'LIS'],
  ['ARN', 'DUB'],
] as const;

/** The n-th of a set of varied trips: travellers, routes, dates and party sizes (some charges need approval). */
export function trip(n: number): TripRequest {
  const [from, to] = ROUTES[n % ROUTES.length] ?? ROUTES[0];
  const traveller = DEMO_TRAVELLERS[n % DEMO_TRAVELLERS.length] ?? DEMO_TRAVELLERS[0]!;
  const day = String(1 + (n % 28)).padStart(2, '0');
  return { travellerId: traveller.travellerId, from, to, date: `2027-04-${day}`, passengers: 1 + (n % 3) };
}

/**
 * Book `count` trips in one test world (the travel manager approves every charge), then export
 * them as `logbook runs export` would: the recorded runs an eval replays.
 */
export async function recordTrips(count: number, world: BookingWorld = bookingWorld()): Promise<{ runs: ExportedRun[]; world: BookingWorld }> {
  const worker = spawnWorker(world);
  const refs = [];
  for (let n = 0; n < count; n++) {
    const run = { tenant: 'acme', runId: `trip-${String(n + 1).padStart(4, '0')}` };
    await startRun(worker.deps, { ...run, agent: 'booking', input: trip(n) });
    const { head } = await driveRun(world, run, { worker: () => worker, outside: approveCharges(), resolver: bookingResolver(world) });
    if (head.status !== 'completed') throw new Error(`recording ${run.runId}: the run ended ${head.status}`);
    refs.push(run);
  }
  return { runs: await exportRuns(world.storage, refs), world };
}

export interface CandidateOptions {
  /** The planted regression: "Card on file:" becomes "Payment card:" in the instructions. */
  reword?: boolean;
  /** Sees each candidate's fake services (one set per recorded run): a test counts what they did. */
  onServices?: (services: TravelServices) => void;
}

/** The candidate: the booking agent as version 1.1.0, with its prompt reworded or not. */
export function candidateAgents(options: CandidateOptions = {}): Agents {
  const services = new TravelServices(new MemoryStore(emptyTravelState()));
  options.onServices?.(services);
  const current = bookingAgent(services);
  const text = current.system.text;
  const candidate = defineAgent<typeof TripRequest, BookingApp>({
    ...current,
    version: '1.1.0',
    system: {
      version: options.reword ? 'booking-prompt-2' : current.system.version,
      text: async (input, ctx) => {
        const prompt = typeof text === 'string' ? text : await text(input, ctx);
        return options.reword ? prompt.replace('Card on file:', 'Payment card:') : prompt;
      },
    },
  });
  return defineAgents({ agents: [candidate], models: { [BOOKING_MODEL_ID]: () => bookingModel() }, appContext: () => travellerDirectory() });
}

/** Writes the services of every candidate applied (holds, charges, ticketings): what an eval must leave at zero. */
export function appliedWrites(effects: readonly TravelEffect[]): TravelEffect[] {
  return effects.filter((e) => e.applied && !e.readOnly);
}

/** The fake services of every candidate the default export built in this process: `npm run bench -- --eval` counts their effects. */
export const candidateServices: TravelServices[] = [];

/**
 * The agents module `logbook eval --agents examples/booking-agent/booking-evals.ts` loads: the
 * candidate, reworded when BOOKING_EVAL_REWORD=1, built once per recorded run.
 */
export default () => candidateAgents({ reword: process.env.BOOKING_EVAL_REWORD === '1', onServices: (s) => candidateServices.push(s) });
