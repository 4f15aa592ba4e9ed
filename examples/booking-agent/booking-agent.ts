/**
 * A travel booking agent: typed input, instructions built from the input and the traveller's
 * profile, pinned model settings, a structured booking confirmation, a bounded context, and one
 * tool per kind of side effect a booking has (read, idempotent write, paid write a person approves).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ScriptedModel, attachment, defineAgent, defineTool, type ModelAttachment, type ModelRequest, type Price, type ScriptStep } from 'logbook';
import type { BookingApp } from './travellers.js';
import type { TravelServices } from './travel-services.js';

export const BOOKING_MODEL_ID = 'scripted:booking-v1';
/** A charge above this needs a person's approval before it runs. */
export const APPROVAL_ABOVE_EUR = 250;

const airport = z.string().regex(/^[A-Z]{3}$/, 'an IATA airport code such as LHR');

/** What a run of the agent takes: POST /runs, the trigger, forks and child runs refuse anything else (400 with paths). */
export const TripRequest = z
  .object({
    travellerId: z.string().regex(/^t_[a-z0-9_]+$/),
    from: airport,
    to: airport,
    date: z.iso.date(),
    passengers: z.number().int().min(1).max(9).default(1),
    // A passport scan or a visa letter, uploaded first (POST /attachments, `--attach document=PATH`):
    // the input holds its reference, the model receives the file itself on every call.
    document: attachment({ accept: ['image/png', 'image/jpeg', 'application/pdf'] }).optional(),
  })
  .refine((t) => t.from !== t.to, { message: 'from and to must differ', path: ['to'] })
  .meta({ examples: [{ travellerId: 't_ada', from: 'LHR', to: 'OSL', date: '2027-03-14', passengers: 2 }] });
export type TripRequest = z.infer<typeof TripRequest>;

/** What a completed run answers: a program reads `output`, not prose. */
export const BookingConfirmation = z.object({
  status: z.literal('booked'),
  locator: z.string(),
  traveller: z.string(),
  flight: z.object({ number: z.string(), from: airport, to: airport, departure: z.string() }),
  passengers: z.number().int().positive(),
  totalEur: z.number().positive(),
  chargeId: z.string(),
  tickets: z.array(z.string()).min(1),
  /** The travel document the booking was made against: its name and the sha256 of the bytes the model was sent. */
  travelDocument: z.object({ name: z.string(), mediaType: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }).optional(),
});
export type BookingConfirmation = z.infer<typeof BookingConfirmation>;

export function bookingTools(services: TravelServices) {
  return [
    defineTool({
      name: 'search_flights',
      version: '1.0.0',
      description: 'Flights with enough free seats on a route and day, with their fares.',
      input: z.object({ from: airport, to: airport, date: z.iso.date(), passengers: z.number().int().positive() }),
      // Read-only: a call cut off by a crash simply runs again.
      policy: 'rerun',
      timeoutMs: 10_000,
      async execute(query, ctx) {
        return { flights: services.searchFlights(query, ctx.idempotencyKey) };
      },
    }),
    defineTool({
      name: 'hold_seats',
      version: '1.0.0',
      description: 'Hold seats on a flight until departure. Returns the booking locator and the total fare.',
      input: z.object({ flightId: z.string(), passengers: z.number().int().positive(), travellerId: z.string() }),
      // The airline dedupes holds by idempotency key: a cut-off call runs again with the same key.
      policy: 'idempotency_key',
      timeoutMs: 10_000,
      async execute(request, ctx) {
        ctx.assertLeaseFresh();
        return services.holdSeats(request, ctx.idempotencyKey);
      },
    }),
    defineTool({
      name: 'charge_card',
      version: '1.0.0',
      description: `Charge the traveller's card on file for a hold. Charges above ${APPROVAL_ABOVE_EUR} EUR wait for a person's approval.`,
      input: z.object({ locator: z.string(), amountEur: z.number().positive(), card: z.string() }),
      // Money: a person approves it first, bound to these exact arguments.
      approval: (args) => args.amountEur > APPROVAL_ABOVE_EUR,
      approvalTimeoutSeconds: 2 * 86_400,
      // A cut-off charge is looked up by its key before anything else happens.
      policy: 'verify',
      timeoutMs: 15_000,
      async execute(request, ctx) {
        ctx.assertLeaseFresh();
        return services.charge(request, ctx.idempotencyKey);
      },
      async verify(_request, ctx) {
        const charge = services.findCharge(ctx.idempotencyKey);
        return charge ? { status: 'landed', output: { ...charge, deduplicated: false } } : { status: 'not_landed' };
      },
    }),
    defineTool({
      name: 'issue_tickets',
      version: '1.0.0',
      description: 'Issue the tickets of a paid hold. Returns one ticket number per passenger.',
      input: z.object({ locator: z.string(), chargeId: z.string() }),
      policy: 'idempotency_key',
      timeoutMs: 10_000,
      async execute(request, ctx) {
        ctx.assertLeaseFresh();
        return services.issueTickets(request, ctx.idempotencyKey);
      },
    }),
  ];
}

export interface BookingAgentOptions {
  /** A real model instead of the scripted one: its id (pinned) and price. */
  model?: { id: string; price: Price };
}

export function bookingAgent(services: TravelServices, options: BookingAgentOptions = {}) {
  return defineAgent<typeof TripRequest, BookingApp>({
    name: 'booking',
    version: '1.0.0',
    input: TripRequest,
    model: {
      ...(options.model ?? { id: BOOKING_MODEL_ID, price: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 } }),
      maxOutputTokens: 2048,
      // One call at a time (never charge while a hold is in flight); the model decides when it is done.
      settings: { temperature: 0, toolChoice: 'auto', parallelToolCalls: false },
    },
    system: {
      version: 'booking-prompt-1',
      // Built once when a run starts, from its typed input and the traveller's profile; pinned.
      text: async (trip, ctx) => {
        const [traveller, policy] = await Promise.all([ctx.app.profile(trip.travellerId), ctx.app.policy(ctx.tenant)]);
        return [
          `You book flights for ${traveller.name} (traveller ${traveller.travellerId}), ${trip.passengers} passenger(s), ${trip.from} to ${trip.to} on ${trip.date}.`,
          `Seat preference: ${traveller.seat}.${traveller.loyalty ? ` Loyalty number: ${traveller.loyalty}.` : ''}`,
          `Card on file: ${traveller.card}. Company policy: ${policy.cabin} cabin, at most ${policy.maxTotalEur} EUR in total.`,
          'Search, hold the cheapest flight within policy, charge the card for the hold, issue the tickets,',
          'then answer with the booking confirmation as JSON.',
          // Not the file's name here: that is the uploader's text, and the model reads it with the request.
          ...(trip.document ? ['A travel document is attached to the request: name it in the confirmation (travelDocument).'] : []),
        ].join('\n');
      },
    },
    tools: bookingTools(services),
    output: { schema: BookingConfirmation, maxRepairs: 2 },
    // The last 3 turns verbatim; the long search result of the first turn by its summary after that.
    context: { keepTurns: 3, olderToolResults: 'summary' },
    budgets: { maxSteps: 12, maxCostUsd: 0.5, deadlineSeconds: 3 * 86_400 },
    graceMs: 5_000,
  });
}

/** The latest successful result of `tool` in the prompt, parsed. */
function lastResult<T>(request: ModelRequest, tool: string): T | undefined {
  for (const m of [...request.messages].reverse()) if (m.role === 'tool' && m.name === tool && !m.isError) return JSON.parse(m.content) as T;
  return undefined;
}

/** The run's input, as the first user message holds it. */
function tripOf(request: ModelRequest): TripRequest {
  const first = request.messages[0];
  return TripRequest.parse(JSON.parse(first?.role === 'user' ? first.content : '{}'));
}

/**
 * The travel document the model was sent with the run's input (the first user message), as the
 * confirmation names it: the sha256 is of the bytes that arrived, so a test sees the file got through.
 */
function travelDocumentOf(request: ModelRequest): BookingConfirmation['travelDocument'] {
  const first = request.messages[0];
  const file: ModelAttachment | undefined = first?.role === 'user' ? first.attachments?.[0] : undefined;
  if (!file) return undefined;
  const sha256 = createHash('sha256').update(Buffer.from(file.data, 'base64')).digest('hex');
  return { name: file.name ?? 'travel document', mediaType: file.mediaType, sha256 };
}

/**
 * What a model would do, scripted: search, hold the cheapest flight within policy, charge, ticket,
 * answer with JSON. It reads the traveller's name and card from the instructions the run pinned,
 * and names the travel document it was sent, if any.
 */
export function bookingScript(): ScriptStep[] {
  const fromSystem = (request: ModelRequest, label: RegExp) => label.exec(request.system)?.[1] ?? '?';
  return [
    (request) => {
      const { from, to, date, passengers } = tripOf(request);
      return { text: 'Searching flights.', calls: [{ name: 'search_flights', args: { from, to, date, passengers } }] };
    },
    (request) => {
      const trip = tripOf(request);
      const flights = lastResult<{ flights: { flightId: string; fareEur: number }[] }>(request, 'search_flights')?.flights ?? [];
      const cheapest = [...flights].sort((a, b) => a.fareEur - b.fareEur)[0];
      if (!cheapest) return { text: JSON.stringify({ status: 'no_flights' }) };
      return {
        text: 'Holding the cheapest flight.',
        calls: [{ name: 'hold_seats', args: { flightId: cheapest.flightId, passengers: trip.passengers, travellerId: trip.travellerId } }],
      };
    },
    (request) => {
      const hold = lastResult<{ locator: string; totalEur: number }>(request, 'hold_seats');
      return {
        text: 'Charging the card on file.',
        calls: [
          { name: 'charge_card', args: { locator: hold?.locator ?? '?', amountEur: hold?.totalEur ?? 0, card: fromSystem(request, /Card on file: (\S+?)\./) } },
        ],
      };
    },
    (request) => {
      const charge = lastResult<{ locator: string; chargeId: string }>(request, 'charge_card');
      return { text: 'Issuing the tickets.', calls: [{ name: 'issue_tickets', args: { locator: charge?.locator ?? '?', chargeId: charge?.chargeId ?? '?' } }] };
    },
    (request) => {
      const hold = lastResult<{ locator: string; flight: BookingConfirmation['flight']; passengers: number; totalEur: number }>(request, 'hold_seats');
      const charge = lastResult<{ chargeId: string }>(request, 'charge_card');
      const tickets = lastResult<{ ticketNumbers: string[] }>(request, 'issue_tickets');
      const confirmation: BookingConfirmation = {
        status: 'booked',
        locator: hold?.locator ?? '?',
        traveller: fromSystem(request, /You book flights for (.+?) \(/),
        flight: hold?.flight ?? { number: '?', from: '?', to: '?', departure: '?' },
        passengers: hold?.passengers ?? 0,
        totalEur: hold?.totalEur ?? 0,
        chargeId: charge?.chargeId ?? '?',
        tickets: tickets?.ticketNumbers ?? [],
      };
      const document = travelDocumentOf(request);
      if (document) confirmation.travelDocument = document;
      return { text: JSON.stringify(confirmation) };
    },
  ];
}

export function bookingModel(): ScriptedModel {
  return new ScriptedModel(bookingScript());
}
