import { resolveBudgets, WORKFLOW_CEILING, WORKFLOW_DEFAULT_BUDGETS } from '../../core/budgets.js';
import { ValidationError } from '../../core/errors.js';
import { hashJson } from '../../support/hash.js';
import { parseRunInput } from '../../authoring/run-input.js';
import type { RunRef } from '../../core/run-ref.js';
import type { EngineDeps } from '../engine.js';
import { admit, createRun, type StartRunRequest, type StartRunResult } from '../run-creation.js';

/** How long the engine waits past a started step's deadline before applying its policy, by default. */
export const DEFAULT_WORKFLOW_GRACE_MS = 30_000;

/**
 * Create a workflow run as any run is created (run_started at seq 1, then the head, then the
 * first tick; a retry redoes what is missing; the same id with another request is a conflict).
 * What it pins: the workflow's name and version, its input's and output's schemas, its budgets.
 * No code is called: the first step runs `run(ctx, input)` from the top.
 */
export async function startWorkflowRun(deps: EngineDeps, request: StartRunRequest, runId: string): Promise<StartRunResult> {
  const { registry, clock, codec } = deps;
  const name = request.workflow ?? '';
  const workflow = registry.workflow(name, request.version);
  if (!workflow) {
    const known = registry.workflowNames();
    throw new ValidationError(`unknown workflow ${name}${request.version ? `@${request.version}` : ''}`, [
      { path: request.version && known.includes(name) ? 'version' : 'workflow', message: `not registered; known: ${known.join(', ') || 'none'}` },
    ]);
  }
  parseRunInput(workflow, request.input);
  const run: RunRef = { tenant: request.tenant, runId };
  const child = request.child;
  const admitted = child ? undefined : await admit(deps, run);
  const requestHash = hashJson({
    workflow: workflow.name,
    version: workflow.version,
    input: codec.redactJson(request.input),
    budgets: request.budgets ?? null,
    ...(child ? { parent: child.parent, childBudgets: child.budgets } : {}),
  });
  const now = clock.now();
  const budgets = child ? { ...child.budgets } : resolveBudgets({ ...workflow.budgets, ...request.budgets }, now, WORKFLOW_DEFAULT_BUDGETS, WORKFLOW_CEILING);
  const draft = await codec.encodeDraft(run, {
    type: 'run_started',
    tenant: run.tenant,
    runId,
    requestHash,
    agent: { name: workflow.name, version: workflow.version },
    workflow: workflow.pinnedOutput ? { output: workflow.pinnedOutput } : {},
    tools: [],
    input: { kind: 'inline', value: request.input },
    ...(workflow.inputSchema ? { inputSchema: workflow.inputSchema } : {}),
    budgets,
    graceMs: workflow.graceMs ?? DEFAULT_WORKFLOW_GRACE_MS,
    expiresAt: budgets.deadlineAt + deps.config.retentionFailedMs,
    ...(child ? { parent: { ...child.parent } } : {}),
  });
  return createRun(deps, run, draft, requestHash, admitted);
}
