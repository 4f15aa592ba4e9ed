import type { LeaseGrant } from '../ports/run-heads.js';
import { MAX_STALLED_CLAIMS } from '../core/limits.js';

/**
 * Poison versus chaos, from the head alone (limits.ts has the arithmetic). A claim is in a streak
 * when the claim before it ended abnormally: it neither released the lease nor made progress.
 */
export function inStreak(grant: LeaseGrant): boolean {
  return grant.attempts > 1 || (grant.head.stalls ?? 0) > 0;
}

/**
 * The stall count a claim in a streak marks once it has loaded the run: one more when the claim
 * before it had loaded too (attempts back at 1), else 1: a death before loading in between means
 * the run does not die in the same place every time, so the stalls in a row start again.
 */
export function stallsAfterLoad(grant: LeaseGrant): number {
  return grant.attempts > 1 ? 1 : (grant.head.stalls ?? 0) + 1;
}

/**
 * Why the run is poison, or undefined: claims that died before the run loaded, or claims that
 * loaded it and died before making progress, each counted apart (the arithmetic is in limits.ts).
 */
export function poisonDetail(grant: LeaseGrant, maxClaimAttempts: number): string | undefined {
  if (grant.attempts > maxClaimAttempts)
    return `${grant.attempts - 1} claims in a row died before the run was loaded (${grant.attempts} claims without progress)`;
  const stalls = grant.head.stalls ?? 0;
  if (stalls >= MAX_STALLED_CLAIMS) return `${stalls} claims in a row loaded the run and died before appending anything (claims without progress)`;
  return undefined;
}
