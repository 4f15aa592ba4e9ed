import { RunConflictError, TooManyRunsError, ValidationError } from '../core/errors.js';
import { parseEvent, type EventDraft, type EventOf } from '../core/events.js';
import { RUN_ID_PATTERN, TENANT_PATTERN, type RunRef } from '../core/run-ref.js';
import { TERMINAL_STATUSES, type RunHead } from '../ports/run-heads.js';
import { hintedTick } from '../ports/step-queue.js';
import type { EngineDeps } from './engine.js';
import type { BudgetRequest } from '../core/budgets.js';
import type { Budgets } from '../core/events.js';
import type { JsonValue } from '../core/json.js';

/**
 * How every run is created, agent or workflow (start-run.ts, workflow/start-workflow.ts): checked
 * ids, admission under the tenant's limit, then run_started at seq 1 (conditional, carrying a
 * hash of the request), the head and the first tick, in the order that needs no transaction.
 */

/** What starts a run: from the API, the trigger, a schedule, a parent run, a test. */
export interface StartRunRequest {
  tenant: string;
  /** Client-chosen id (idempotency); generated when absent. */
  runId?: string;
  /** The agent to run; or `workflow`: exactly one of the two. */
  agent?: string;
  /** The workflow to run (defineWorkflow). */
  workflow?: string;
  version?: string;
  input: JsonValue;
  budgets?: BudgetRequest;
  /**
   * A child run (agentTool): its parent and the exact budgets reserved for it on the parent
   * (absolute, so a retried create carries the same request hash whenever it is re-issued).
   * Set by the engine only; the API never passes it.
   */
  child?: { parent: { runId: string; callId: string }; budgets: Budgets };
}

/** What a start answers. */
export interface StartRunResult {
  runId: string;
  created: boolean;
  status: string;
}

/** The writer of a run_started: no lease holder exists yet. */
const writerEpoch = 0;

/** The tenant and run id every start checks first; the id is generated when the caller gave none. */
export function checkedRunId(deps: EngineDeps, request: Pick<StartRunRequest, 'tenant' | 'runId' | 'agent' | 'workflow'>): string {
  if (!TENANT_PATTERN.test(request.tenant)) throw new ValidationError(`invalid tenant`);
  if (request.agent !== undefined && request.workflow !== undefined) {
    throw new ValidationError('name an agent or a workflow, not both', [{ path: 'workflow', message: 'not allowed with agent' }]);
  }
  const runId = request.runId ?? deps.ids.inboxId().toLowerCase();
  if (!RUN_ID_PATTERN.test(runId)) {
    throw new ValidationError('invalid runId', [{ path: 'runId', message: `must match ${RUN_ID_PATTERN}` }]);
  }
  return runId;
}

/**
 * Append the encoded run_started at seq 1 (conditional), then the head and the first tick. A
 * retried PutItem of this very call carries this nonce and counts as ours; a second request with
 * the same id carries another nonce and is answered from the stored run_started.
 */
export async function createRun(deps: EngineDeps, run: RunRef, draft: EventDraft, requestHash: string, admitted: boolean | undefined): Promise<StartRunResult> {
  const { clock, ids, log } = deps;
  const event = parseEvent({ ...draft, v: 1, seq: 1, at: clock.now(), by: { epoch: writerEpoch, nonce: `create:${ids.nonce()}` } });
  let created = true;
  try {
    await log.append(run, event);
  } catch (error) {
    const existing = (await log.readOne(run, 1)) as EventOf<'run_started'> | undefined;
    if (!existing) throw error;
    if (existing.requestHash !== requestHash) throw new RunConflictError(run);
    created = false;
  }
  const started = (created ? event : parseEvent(await log.readOne(run, 1))) as EventOf<'run_started'>;
  return finishStart(deps, run, started, created, admitted);
}

/** After run_started is stored: the head, then the first tick (both redone by a retry). */
export async function finishStart(
  deps: EngineDeps,
  run: RunRef,
  started: EventOf<'run_started'>,
  created: boolean,
  admitted: boolean | undefined,
): Promise<StartRunResult> {
  const { clock, heads, queue } = deps;
  const runId = run.runId;
  const now = clock.now();
  // The head records the tick sent right after it (queuedAt): under a flood that tick may wait in
  // the queue's backlog for minutes, and the sweeper must not add another one meanwhile.
  const head: RunHead = { ...initialHead(started, now), queuedAt: now };
  const headCreated = await heads.createHead(head);
  // Always (re)send the first tick: a retry after a crash between head and tick must not leave
  // the run waiting for the sweeper. Within FIFO's window the dedupe id makes it a no-op; later,
  // a spare tick is harmless (the step finds nothing to do or a lease held).
  await queue.enqueue(hintedTick(run, {}), { dedupeId: `${runId}:1:0` });
  const current = headCreated ? head : await heads.getHead(run);
  // A retried start of a run that has finished since must not hold a slot again.
  if (admitted && current && TERMINAL_STATUSES.has(current.status)) await deps.admission?.release(run);
  return { runId, created, status: current?.status ?? 'running' };
}

/**
 * Take a slot for a new run under the tenant's limit (true), or none is needed (undefined). A
 * refused start is either a retry of a run that exists (it goes on, as any retry: nothing new is
 * admitted) or a new run over the limit (TooManyRunsError, nothing written).
 *
 * Why refuse rather than queue: a refusal holds nothing (no run waiting outside the queue that
 * something must remember to admit, and that a crash could strand), the caller already retries
 * (HTTP clients on 429 + Retry-After; EventBridge's invocation of the trigger retries a thrown
 * error), and the step queue then never holds more than the tenants' limits' worth of runs, which
 * is what bounds another tenant's wait (docs/guides/flood-and-tenant-limits.md).
 */
export async function admit(deps: EngineDeps, run: RunRef): Promise<boolean | undefined> {
  const max = deps.config.maxActiveRuns ?? 0;
  if (!deps.admission || max <= 0) return undefined;
  if (await deps.admission.admit(run, max)) return true;
  if ((await deps.log.readOne(run, 1)) !== undefined) return undefined;
  throw new TooManyRunsError(max, deps.config.admissionRetryAfterS ?? 5);
}

/** The head of a run that was just created: a projection of its run_started and nothing else. */
export function initialHead(
  started: Pick<EventOf<'run_started'>, 'tenant' | 'runId' | 'agent' | 'at' | 'expiresAt'> & {
    budgets?: EventOf<'run_started'>['budgets'];
    parent?: EventOf<'run_started'>['parent'];
  },
  now: number,
): RunHead {
  return {
    tenant: started.tenant,
    runId: started.runId,
    agent: { ...started.agent },
    status: 'running',
    lastSeq: 1,
    createdAt: started.at,
    updatedAt: now,
    epoch: 0,
    attempts: 0,
    inboxVersion: 0,
    ingestedInboxVersion: 0,
    usage: { steps: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 },
    ...(started.budgets ? { budgets: started.budgets } : {}),
    attention: [],
    notifiedSeq: 0,
    expiresAt: started.expiresAt,
    ...(started.parent ? { parent: { ...started.parent } } : {}),
  };
}
