import { TooManyRunsError } from '../core/errors.js';
import type { Admission } from '../ports/admission.js';
import { TERMINAL_STATUSES, type RunStatus } from '../ports/run-heads.js';
import type { RunRef } from '../core/run-ref.js';
import type { EngineDeps } from './engine.js';

/**
 * How a path makes a run work, as admission sees it. Every such path calls admitRun:
 * - `start`: a new run (the API, the EventBridge trigger, a schedule): takes a slot;
 * - `fork`: a new run copied from another: takes a slot, like any start;
 * - `reopen`: a follow-up message to a completed run: the run gave its slot back when it
 *   completed, and works again, so it takes one again;
 * - `child`: a run its parent's worker starts (agentTool, a workflow's child): it runs under its
 *   parent's slot and budget, and takes none. The parent stays unfinished while it waits for the
 *   child (its slot held), the child's budgets are reserved from the parent's and its deadline is
 *   never past the parent's, and a cancel of the parent cascades: a family holds one slot. (Were
 *   children counted, a tenant at its limit whose runs all wait for children would never finish.)
 */
export type AdmissionPath = { kind: 'start' | 'fork' | 'reopen' } | { kind: 'child'; parent: RunRef };

/**
 * The one door of every path that makes a run work (admission.ts): take the run's slot under its
 * tenant's limit, do `act` (everything the path writes), and give the slot back whenever the slot
 * was taken by this call and the run is not left working:
 * - `act` throws (a conflict with another request, a store error, a refused input, a crash of
 *   this process aside): the slot is given back unless the run exists and is unfinished (then
 *   the slot is that run's, whoever made it);
 * - `act` answers, but `keeps(result)` says the run is not working (a retried start of a run
 *   that has finished since): given back too.
 * A slot the run held already (a retry, a concurrent request for the same id) is never given
 * back here: it is not this call's. A refused admission writes nothing: TooManyRunsError (429
 * with Retry-After), except for a retry of a start or fork that exists (answered from its log,
 * taking nothing).
 *
 * With no limit configured (maxActiveRuns 0) or no admission port, `act` just runs.
 */
export async function admitRun<T>(deps: EngineDeps, run: RunRef, path: AdmissionPath, act: () => Promise<T>, keeps?: (result: T) => boolean): Promise<T> {
  const max = deps.config.maxActiveRuns ?? 0;
  const admission = deps.admission;
  if (path.kind === 'child' || !admission || max <= 0) return act();
  const answer = await admission.admit(run, max);
  if (answer === 'held') return act();
  if (answer === 'refused') {
    // A retried create of a run that exists is not a new run: it goes on (and takes nothing).
    if (path.kind !== 'reopen' && (await deps.log.readOne(run, 1)) !== undefined) return act();
    // A slot whose taker died before it could give it back is freed here, then one more try.
    if ((await reclaimStale(deps, admission, run.tenant)) > 0) return admitRun(deps, run, path, act, keeps);
    throw new TooManyRunsError(max, deps.config.admissionRetryAfterS ?? 5);
  }
  let result: T;
  try {
    result = await act();
  } catch (error) {
    await giveBack(deps, run, error);
    throw error;
  }
  if (keeps && !keeps(result)) await admission.release(run);
  return result;
}

/** How a start request is admitted: a child (agentTool, a workflow's child) runs under its parent's slot, any other start takes one. */
export function admissionPath(request: { tenant: string; child?: { parent: { runId: string } } }): AdmissionPath {
  return request.child ? { kind: 'child', parent: { tenant: request.tenant, runId: request.child.parent.runId } } : { kind: 'start' };
}

/** Whether a run with this status keeps its slot (an unfinished one). */
export function keepsSlot(status: RunStatus | string): boolean {
  return !TERMINAL_STATUSES.has(status as RunStatus);
}

/**
 * After a failed act: the slot goes back unless the run exists and works (its run_started is
 * stored and its head is missing, as a create cut short leaves it, or unfinished). A failure to
 * give it back is logged, never thrown over the act's own error.
 */
async function giveBack(deps: EngineDeps, run: RunRef, cause: unknown): Promise<void> {
  try {
    if ((await deps.log.readOne(run, 1)) !== undefined) {
      const head = await deps.heads.getHead(run);
      if (!head || keepsSlot(head.status)) return;
    }
    await deps.admission?.release(run);
  } catch (error) {
    deps.logger?.warn('admission slot not given back after a failed start', { ...run, cause: String(cause), error: String(error) });
  }
}

/** How long a slot whose run was never created may be held before a refused start frees it. */
export const STALE_SLOT_MS = 60_000;

/** Per admission store (per process): when each tenant was last looked at, and ids seen runless. */
const audits = new WeakMap<Admission, { at: Map<string, number>; runless: Map<string, number> }>();

/**
 * A full tenant's slots that nothing will give back, freed: the process that took one was killed
 * before it could (a Lambda timed out between the admit and the append; no code of it runs
 * again), or a run's end was not released yet. At most once per tenant per STALE_SLOT_MS in each
 * process, and only when a start was refused. A holder is freed when its run has ended, or when
 * its run does not exist on two looks at least STALE_SLOT_MS apart (a start still in flight has
 * written its run_started long before). A run that works keeps its slot, always. Returns how
 * many slots were freed.
 */
async function reclaimStale(deps: EngineDeps, admission: Admission, tenant: string): Promise<number> {
  let memo = audits.get(admission);
  if (!memo) audits.set(admission, (memo = { at: new Map(), runless: new Map() }));
  const now = deps.clock.now();
  if (now - (memo.at.get(tenant) ?? -Infinity) < STALE_SLOT_MS) return 0;
  memo.at.set(tenant, now);
  let freed = 0;
  for (const runId of await admission.holders(tenant)) {
    const run = { tenant, runId };
    const seenKey = `${tenant}\n${runId}`;
    const head = await deps.heads.getHead(run);
    const exists = head !== undefined || (await deps.log.readOne(run, 1)) !== undefined;
    if (exists) memo.runless.delete(seenKey);
    if (head && keepsSlot(head.status)) continue;
    if (!exists) {
      const first = memo.runless.get(seenKey);
      if (first === undefined) memo.runless.set(seenKey, now);
      if (first === undefined || now - first < STALE_SLOT_MS) continue;
      memo.runless.delete(seenKey);
    } else if (!head) {
      continue; // created, its head not yet: a retry of its start finishes it
    }
    await admission.release(run);
    deps.logger?.warn('admission slot reclaimed', { ...run, why: head ? `the run is ${head.status}` : 'the run was never created' });
    freed++;
  }
  return freed;
}
