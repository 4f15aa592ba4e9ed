import type { StateStore } from './state-store.js';

/**
 * A fake airline and a fake payment provider, as careful real ones behave: every write carries
 * the caller's idempotency key, and a key seen before gets the first request's answer back and
 * changes nothing (`applied: false` in the effect log). Locators, charge and ticket numbers come
 * from the service's own counters, never from the key: a crash before a model response lands
 * gives the retried call another key, and an id made from the key would change the answer.
 */

export interface Flight {
  flightId: string;
  number: string;
  from: string;
  to: string;
  departure: string;
  seatsLeft: number;
  fareEur: number;
}

export interface Hold {
  locator: string;
  flight: Pick<Flight, 'number' | 'from' | 'to' | 'departure'>;
  passengers: number;
  totalEur: number;
  /** The hold lapses after this (ISO time), unless ticketed. */
  expires: string;
}

export interface Charge {
  chargeId: string;
  locator: string;
  amountEur: number;
  card: string;
}

export interface Ticketing {
  locator: string;
  ticketNumbers: string[];
}

/** One request a service got, in the shape logbook/testing's harness reads (`key`, `op`, `applied`, `readOnly`). */
export interface TravelEffect {
  service: 'airline' | 'payments';
  op: 'search' | 'hold' | 'ticket' | 'charge' | 'lookup';
  key: string;
  /** False when the key was seen before and nothing changed. */
  applied: boolean;
  readOnly: boolean;
  detail: Record<string, unknown>;
}

export interface TravelState {
  effects: TravelEffect[];
  holds: Record<string, Hold>;
  charges: Record<string, Charge>;
  tickets: Record<string, Ticketing>;
  counters: { hold: number; charge: number; ticket: number };
}

export const emptyTravelState = (): TravelState => ({ effects: [], holds: {}, charges: {}, tickets: {}, counters: { hold: 0, charge: 0, ticket: 0 } });

/** A charge or a ticket for a hold the airline never made. */
export class UnknownHoldError extends Error {
  readonly code = 'unknown_hold';
  constructor(locator: string) {
    super(`no hold ${locator}`);
    this.name = 'UnknownHoldError';
  }
}

/** Three flights a day on any route, with fares from the route's letters: the same search, the same answer. */
function timetable(from: string, to: string, date: string): Flight[] {
  const base = [...`${from}${to}`].reduce((n, c) => n + c.charCodeAt(0), 0);
  return [
    { hour: '07:10', fare: 180 + (base % 40), seats: 4 },
    { hour: '12:45', fare: 240 + (base % 55), seats: 9 },
    { hour: '18:30', fare: 150 + (base % 30), seats: 2 },
  ].map((slot, i) => ({
    flightId: `${from}${to}-${date}-${i + 1}`,
    number: `LB${100 + ((base + i * 7) % 900)}`,
    from,
    to,
    departure: `${date}T${slot.hour}:00Z`,
    seatsLeft: slot.seats,
    fareEur: slot.fare,
  }));
}

export class TravelServices {
  constructor(readonly store: StateStore<TravelState>) {}

  /** Read-only: the same answer however often it is asked. */
  searchFlights(query: { from: string; to: string; date: string; passengers: number }, key: string): Flight[] {
    const flights = timetable(query.from, query.to, query.date).filter((f) => f.seatsLeft >= query.passengers);
    this.store.transact((s) => void s.effects.push({ service: 'airline', op: 'search', key, applied: true, readOnly: true, detail: { ...query } }));
    return flights;
  }

  /** Holds seats on a flight; the same key again returns the first hold. */
  holdSeats(request: { flightId: string; passengers: number; travellerId: string }, key: string): Hold & { deduplicated: boolean } {
    const [route = '', yyyy = '', mm = '', dd = '', slot = ''] = request.flightId.split('-');
    const flight = timetable(route.slice(0, 3), route.slice(3), `${yyyy}-${mm}-${dd}`)[Number(slot) - 1];
    if (!flight) throw new Error(`no flight ${request.flightId}`);
    return this.store.transact((s) => {
      const seen = s.holds[key];
      const hold: Hold = seen ?? {
        locator: `PNR${String(++s.counters.hold).padStart(4, '0')}`,
        flight: { number: flight.number, from: flight.from, to: flight.to, departure: flight.departure },
        passengers: request.passengers,
        totalEur: flight.fareEur * request.passengers,
        expires: flight.departure,
      };
      s.holds[key] = hold;
      s.effects.push({ service: 'airline', op: 'hold', key, applied: !seen, readOnly: false, detail: { ...request, locator: hold.locator } });
      return { ...hold, deduplicated: seen !== undefined };
    });
  }

  /** Charges the traveller's card for a hold; the same key again returns the first charge. */
  charge(request: { locator: string; amountEur: number; card: string }, key: string): Charge & { deduplicated: boolean } {
    return this.store.transact((s) => {
      if (!Object.values(s.holds).some((h) => h.locator === request.locator)) throw new UnknownHoldError(request.locator);
      const seen = s.charges[key];
      const charge: Charge = seen ?? { chargeId: `ch_${String(++s.counters.charge).padStart(6, '0')}`, ...request };
      s.charges[key] = charge;
      s.effects.push({ service: 'payments', op: 'charge', key, applied: !seen, readOnly: false, detail: { ...charge } });
      return { ...charge, deduplicated: seen !== undefined };
    });
  }

  /** The charge made under this key, if any: how a caller learns whether a cut-off charge landed. */
  findCharge(key: string): Charge | undefined {
    return this.store.transact((s) => {
      s.effects.push({ service: 'payments', op: 'lookup', key, applied: true, readOnly: true, detail: {} });
      return s.charges[key];
    });
  }

  /** Turns a paid hold into tickets; the same key again returns the first tickets. */
  issueTickets(request: { locator: string; chargeId: string }, key: string): Ticketing & { deduplicated: boolean } {
    return this.store.transact((s) => {
      const hold = Object.values(s.holds).find((h) => h.locator === request.locator);
      if (!hold) throw new UnknownHoldError(request.locator);
      const seen = s.tickets[key];
      const ticketing: Ticketing = seen ?? {
        locator: hold.locator,
        ticketNumbers: Array.from({ length: hold.passengers }, () => `074-${String(++s.counters.ticket).padStart(10, '0')}`),
      };
      s.tickets[key] = ticketing;
      s.effects.push({ service: 'airline', op: 'ticket', key, applied: !seen, readOnly: false, detail: { ...request, tickets: ticketing.ticketNumbers } });
      return { ...ticketing, deduplicated: seen !== undefined };
    });
  }

  effects(): TravelEffect[] {
    return this.store.read().effects;
  }
}
