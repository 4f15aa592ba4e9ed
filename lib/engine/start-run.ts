import { resolveBudgets } from '../core/budgets.js';
import { RunConflictError, ValidationError } from '../core/errors.js';
import { parseEvent, type EventOf } from '../core/events.js';
import type { RunRef } from '../core/run-ref.js';
import type { EngineDeps } from './engine.js';
import { hashJson } from '../support/hash.js';
import { pinContext } from '../authoring/context-spec.js';
import { parseRunInput } from '../authoring/run-input.js';
import { checkAttachments } from './attachments.js';
import { resolveInstructions } from '../authoring/instructions.js';
import { startWorkflowRun } from './workflow/start-workflow.js';
import { admit, checkedRunId, createRun, finishStart, type StartRunRequest, type StartRunResult } from './run-creation.js';

export type { StartRunRequest, StartRunResult } from './run-creation.js';
export { initialHead } from './run-creation.js';

/**
 * Create a run in the order that needs no transaction: run_started at seq 1 (conditional,
 * carrying a hash of the request), then the head, then the first tick. A retry redoes whatever
 * is missing; the same id with a different request is a RunConflictError.
 */
export async function startRun(deps: EngineDeps, request: StartRunRequest): Promise<StartRunResult> {
  const { registry, clock, log, codec } = deps;
  const runId = checkedRunId(deps, request);
  if (request.workflow !== undefined) return startWorkflowRun(deps, request, runId);
  if (request.agent === undefined) throw new ValidationError('name an agent or a workflow', [{ path: 'agent', message: 'required' }]);
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
  return createRun(deps, run, draft, requestHash, admitted);
}

/** The agent's context policy as run_started pins it, or nothing (old runs fold without it). */
export function contextPin(
  agent: Parameters<typeof pinContext>[0],
  price: Parameters<typeof pinContext>[1],
): { context?: NonNullable<ReturnType<typeof pinContext>> } {
  const context = pinContext(agent, price);
  return context ? { context } : {};
}
