/**
 * The application's own data that instructions are built from: a traveller's profile and the
 * company's travel policy, loaded once when a run starts (defineAgents' `appContext`).
 */
export interface TravellerProfile {
  travellerId: string;
  name: string;
  seat: 'aisle' | 'window' | 'any';
  loyalty?: string;
  /** The card on file, as the payment provider names it (never the number). */
  card: string;
}

export interface TravelPolicy {
  /** The most a booking may cost in total without a manager's say. */
  maxTotalEur: number;
  cabin: 'economy' | 'premium';
}

/** What instructions functions get as `ctx.app`. */
export interface BookingApp {
  profile(travellerId: string): Promise<TravellerProfile>;
  policy(tenant: string): Promise<TravelPolicy>;
}

export class UnknownTravellerError extends Error {
  readonly code = 'unknown_traveller';
  constructor(travellerId: string) {
    super(`no traveller ${travellerId}`);
    this.name = 'UnknownTravellerError';
  }
}

/** A directory in memory; an application reads its own database here. */
export function travellerDirectory(profiles: readonly TravellerProfile[] = DEMO_TRAVELLERS, policy: TravelPolicy = DEMO_POLICY): BookingApp {
  const byId = new Map(profiles.map((p) => [p.travellerId, p]));
  return {
    async profile(travellerId) {
      const found = byId.get(travellerId);
      if (!found) throw new UnknownTravellerError(travellerId);
      return found;
    },
    async policy() {
      return policy;
    },
  };
}

export const DEMO_TRAVELLERS: readonly TravellerProfile[] = [
  { travellerId: 't_ada', name: 'Ada Lovelace', seat: 'aisle', loyalty: 'LB-GOLD-1815', card: 'card_visa_4242' },
  { travellerId: 't_alan', name: 'Alan Turing', seat: 'window', card: 'card_mc_5454' },
];

export const DEMO_POLICY: TravelPolicy = { maxTotalEur: 1200, cabin: 'economy' };
