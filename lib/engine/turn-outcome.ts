/** How one turn of a run ended: what the step does next (step-runner.ts). */
export type TurnOutcome =
  | { kind: 'continued' }
  /** Without `until`: waiting for an inbox item only (an approval with no expiry). */
  | { kind: 'waiting'; until?: number; reason: string }
  | { kind: 'parked'; reasons: string[] }
  | { kind: 'ended' };
