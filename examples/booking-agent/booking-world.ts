/**
 * The booking agent in a test world (logbook/testing): memory storage, the scripted model, fresh
 * fake services per world, and the people around a run: the approver of charges and the operator
 * who answers a parked run. A trip may carry a travel document (visa-letter.pdf), uploaded into
 * the world before the run starts as POST /attachments would store it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineAgents, idempotencyKey, type AttachmentRef, type ScriptedModel } from 'logbook';
import { requestApproval } from 'logbook/engine';
import { agentsWorld, memoryStorage, uploadAttachment, type HarnessScenario, type Outside, type Resolver, type World } from 'logbook/testing';
import { BOOKING_MODEL_ID, bookingAgent, bookingModel, type TripRequest } from './booking-agent.js';
import { MemoryStore } from './state-store.js';
import { TravelServices, emptyTravelState, type TravelEffect } from './travel-services.js';
import { travellerDirectory } from './travellers.js';

export interface BookingWorld extends World {
  services: TravelServices;
}

/** A small visa letter (a one-page PDF) to attach to a trip: the demo uploads it, the tests too. */
export const VISA_LETTER_FILE = fileURLToPath(new URL('./visa-letter.pdf', import.meta.url));
export const visaLetter = () => ({ bytes: new Uint8Array(readFileSync(VISA_LETTER_FILE)), mediaType: 'application/pdf' as const, name: 'visa-letter.pdf' });

/** The reference POST /attachments answers for an upload: what a trip's `document` holds. */
export function referenceOf(upload: ReturnType<typeof visaLetter>): AttachmentRef {
  const sha256 = createHash('sha256').update(upload.bytes).digest('hex');
  return { kind: 'blob', sha256, mediaType: upload.mediaType, bytes: upload.bytes.byteLength, name: upload.name };
}

export interface BookingWorldOptions {
  /** Uploaded into the world's storage (tenant `acme`) before anything runs. */
  upload?: ReturnType<typeof visaLetter>;
  /** Sees every scripted model the world makes (one per worker): a test reads what each call was sent. */
  onModel?: (model: ScriptedModel) => void;
}

export function bookingWorld(options: BookingWorldOptions = {}): BookingWorld {
  const services = new TravelServices(new MemoryStore(emptyTravelState()));
  const agents = defineAgents({
    agents: [bookingAgent(services)],
    models: {
      [BOOKING_MODEL_ID]: () => {
        const model = bookingModel();
        options.onModel?.(model);
        return model;
      },
    },
    appContext: () => travellerDirectory(),
  });
  const storage = memoryStorage();
  // The memory store holds the bytes once put is called (storeAttachment checks them and puts
  // without waiting on anything first), so the upload is there before the run starts.
  if (options.upload) void uploadAttachment(storage, 'acme', options.upload);
  return { ...agentsWorld(agents, storage), services };
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
    const key = idempotencyKey(head, attention.callId);
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

/** The same trip with the visa letter attached: the model must get its bytes on every call, resumed or not. */
export function documentScenario(onModel?: (model: ScriptedModel) => void): HarnessScenario<BookingWorld, TravelEffect> {
  const upload = visaLetter();
  return {
    ...bookingScenario,
    name: 'booking agent with a travel document attached',
    world: () => bookingWorld({ upload, ...(onModel ? { onModel } : {}) }),
    request: { tenant: 'acme', runId: 'trip-doc', agent: 'booking', input: { ...DEMO_TRIP, document: referenceOf(upload) } },
  };
}
