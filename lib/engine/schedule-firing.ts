import { previousFiring, scheduleRunId } from '../core/cron.js';
import type { RunRef } from '../core/run-ref.js';
import type { ScheduledDefinition } from '../authoring/registry.js';
import type { EngineDeps } from './engine.js';
import { keepsSlot } from './admission-gate.js';
import { startRun } from './start-run.js';

/** What one firing of a schedule did. */
export type FiringOutcome =
  | { outcome: 'started'; runId: string }
  /** A second delivery of the same firing (its run id exists): nothing new started. */
  | { outcome: 'already-started'; runId: string }
  /** overlap 'skip': the run of an earlier firing is unfinished, so this firing started nothing. */
  | { outcome: 'skipped'; runId: string; behind: string };

/**
 * How many earlier firings `skip` looks back over for an unfinished run: a firing that was
 * itself skipped left no run, so the run that made it skip is further back. A run that is still
 * unfinished after this many firings no longer holds later ones back.
 */
export const OVERLAP_LOOKBACK = 50;

/**
 * One firing of a schedule, at `scheduledAt` (the time the schedule fired for, not the time of
 * delivery): its run id is scheduleRunId(name, scheduledAt), so a retried or duplicated delivery
 * names the same run and starts nothing twice (startRun answers a retry of the same request from
 * the log). The run starts through startRun, so through the one admission gate: at the tenant's
 * limit it throws TooManyRunsError (retryable) and nothing is written.
 *
 * overlap `skip`: when the run of an earlier firing (any of the last OVERLAP_LOOKBACK) is
 * unfinished, nothing starts. overlap `queue`: the run starts whatever earlier runs are doing.
 */
export async function fireSchedule(deps: EngineDeps, scheduled: ScheduledDefinition, at: number, tenant = scheduled.schedule.tenant): Promise<FiringOutcome> {
  const scheduledAt = Math.floor(at / 60_000) * 60_000;
  const runId = scheduleRunId(scheduled.name, scheduledAt);
  const run: RunRef = { tenant, runId };
  const exists = (await deps.log.readOne(run, 1)) !== undefined;
  if (!exists && scheduled.schedule.overlap === 'skip') {
    const behind = await unfinishedEarlier(deps, scheduled, scheduledAt, tenant);
    if (behind !== undefined) {
      deps.logger?.info('scheduled firing skipped: an earlier firing is unfinished', { ...run, schedule: scheduled.name, behind });
      return { outcome: 'skipped', runId, behind };
    }
  }
  const s = scheduled.schedule;
  const out = await startRun(deps, {
    tenant,
    runId,
    ...(scheduled.kind === 'workflow' ? { workflow: scheduled.name } : { agent: scheduled.name }),
    version: scheduled.version,
    input: s.input,
  });
  return { outcome: out.created ? 'started' : 'already-started', runId };
}

/** The id of the latest earlier firing's run when it is unfinished; undefined when it finished or none is found. */
async function unfinishedEarlier(deps: EngineDeps, scheduled: ScheduledDefinition, scheduledAt: number, tenant: string): Promise<string | undefined> {
  const { parsed, timezone } = scheduled.schedule;
  let t = scheduledAt;
  for (let i = 0; i < OVERLAP_LOOKBACK; i++) {
    const prev = previousFiring(parsed, timezone, t);
    if (prev === undefined) return undefined;
    t = prev;
    const runId = scheduleRunId(scheduled.name, prev);
    const head = await deps.heads.getHead({ tenant, runId });
    if (head) return keepsSlot(head.status) ? runId : undefined;
    // Created, its head not yet written: a start in flight, unfinished.
    if ((await deps.log.readOne({ tenant, runId }, 1)) !== undefined) return runId;
  }
  return undefined;
}
