import { resolveBudgets, type BudgetRequest } from '../core/budgets.js';
import { RunConflictError, TooManyRunsError, ValidationError } from '../core/errors.js';
import { parseEvent, type Budgets, type EventOf } from '../core/events.js';
import type { JsonValue } from '../core/json.js';
import { RUN_ID_PATTERN, TENANT_PATTERN, type RunRef } from '../core/run-ref.js';
import { TERMINAL_STATUSES, type RunHead } from '../ports/run-heads.js';
import type { EngineDeps } from './engine.js';
import { hashJson } from '../support/hash.js';
import { hintedTick } from '../ports/step-queue.js';
import { pinContext } from '../authoring/context-spec.js';
import { parseRunInput } from '../authoring/run-input.js';
import { checkAttachments } from './attachments.js';
import { resolveInstructions } from '../authoring/instructions.js';

export interface StartRunRequest {
  tenant: string;
  /** Client-chosen id (idempotency); generated when absent. */
  runId?: string;
  agent: string;
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

export interface StartRunResult {
  runId: string;
  created: boolean;
  status: string;
}

const writerEpoch = 0;

/**
 * Create a run in the order that needs no transaction: run_started at seq 1 (conditional,
 * carrying a hash of the request), then the head, then the first tick. A retry redoes whatever
 * is missing; the same id with a different request is a RunConflictError.
 */
export async function startRun(deps: EngineDeps, request: StartRunRequest): Promise<StartRunResult> {
  const { registry, clock, ids, log, codec } = deps;
  if (!TENANT_PATTERN.test(request.tenant)) throw new ValidationError(`invalid tenant`);
  const runId = request.runId ?? ids.inboxId().toLowerCase();
  if (!RUN_ID_PATTERN.test(runId)) {
    throw new ValidationError('invalid runId', [{ path: 'runId', message: `must match ${RUN_ID_PATTERN}` }]);
  }
  const agent = registry.agent(request.agent, request.version);
  if (!agent) {
    throw new ValidationError(`unknown agent ${request.agent}${request.version ? `@${request.version}` : ''}`, [
      { path: request.version ? 'version' : 'agent', message: `not registered; known: ${registry.agentNames().join(', ')}` },
    ]);
  }
  // Typed input: what does not fit is refused before anything is written or charged.
  const parsedInput = parseRunInput(agent, request.input);
  // Attachments: uploaded by this tenant, of a kind the model takes (read, never written here).
  await checkAttachments(deps.blobs, request.tenant, agent.model.id, request.input, 'input');
  const run: RunRef = { tenant: request.tenant, runId };
  const child = request.child;
  // Admission before anything is written (an offloaded input included), so a refused start
  // leaves nothing behind.
  const admitted = child ? undefined : await admit(deps, run);
  // Redact, then hash: a hash of the raw input would let a reader of the log test guesses at a
  // short secret in it. A retry that differs only in a redacted secret is the same request.
  const requestHash = hashJson({
    agent: agent.name,
    version: agent.version,
    input: codec.redactJson(request.input),
    budgets: request.budgets ?? null,
    ...(child ? { parent: child.parent, childBudgets: child.budgets } : {}),
  });
  // A retried create of a run that exists is answered from its log: its instructions were built
  // once, when it was created, and are never built again (the function may not even succeed now).
  const dynamic = typeof agent.system.text === 'function';
  const existing = dynamic && request.runId !== undefined ? await log.readOne(run, 1) : undefined;
  if (existing !== undefined) {
    const started = parseEvent(existing) as EventOf<'run_started'>;
    if (started.requestHash !== requestHash) throw new RunConflictError(run);
    return finishStart(deps, run, started, false, admitted);
  }
  let instructions: Awaited<ReturnType<typeof resolveInstructions>>;
  try {
    instructions = await resolveInstructions(
      agent,
      parsedInput,
      { tenant: run.tenant, runId, ...(child ? { parent: { ...child.parent } } : {}) },
      registry.appContext,
    );
  } catch (error) {
    // A refused start holds no slot (nothing of this run exists: a retry was answered above).
    if (admitted) await deps.admission?.release(run);
    throw error;
  }
  const now = clock.now();
  // The agent's budgets are its defaults; the request may change them, the ceiling clamps both.
  // A child's budgets were fixed (and reserved) by its parent.
  const budgets = child ? { ...child.budgets } : resolveBudgets({ ...agent.budgets, ...request.budgets }, now);
  // Agents built by defineAgents carry the price of their model; a bare registry entry may not.
  const price = agent.model.price ?? { inputPerMTokUsd: 0, outputPerMTokUsd: 0 };
  const draft = await codec.encodeDraft(run, {
    type: 'run_started',
    tenant: run.tenant,
    runId,
    requestHash,
    agent: { name: agent.name, version: agent.version },
    model: { id: agent.model.id, maxOutputTokens: agent.model.maxOutputTokens, price, ...(agent.model.settings ? { settings: agent.model.settings } : {}) },
    prompt: {
      version: agent.system.version,
      text: { kind: 'inline', value: instructions.text },
      sha256: instructions.sha256,
      ...(instructions.resolved ? { resolved: true as const } : {}),
    },
    tools: agent.pinnedTools,
    input: { kind: 'inline', value: request.input },
    ...(agent.inputSchema ? { inputSchema: agent.inputSchema } : {}),
    budgets,
    graceMs: agent.graceMs ?? 30_000,
    expiresAt: budgets.deadlineAt + deps.config.retentionFailedMs,
    ...(child ? { parent: { ...child.parent } } : {}),
    ...(agent.pinnedOutput ? { output: agent.pinnedOutput } : {}),
    ...contextPin(agent, price),
  });
  const event = parseEvent({ ...draft, v: 1, seq: 1, at: now, by: { epoch: writerEpoch, nonce: `create:${ids.nonce()}` } });

  // A retried PutItem of this very call carries this nonce and counts as ours; a second request
  // with the same id carries another nonce and is answered from the stored run_started.
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
async function finishStart(
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
async function admit(deps: EngineDeps, run: RunRef): Promise<boolean | undefined> {
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

/** The agent's context policy as run_started pins it, or nothing (old runs fold without it). */
export function contextPin(
  agent: Parameters<typeof pinContext>[0],
  price: Parameters<typeof pinContext>[1],
): { context?: NonNullable<ReturnType<typeof pinContext>> } {
  const context = pinContext(agent, price);
  return context ? { context } : {};
}
