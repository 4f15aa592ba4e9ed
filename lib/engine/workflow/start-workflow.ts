import { resolveBudgets, WORKFLOW_CEILING, WORKFLOW_DEFAULT_BUDGETS } from '../../core/budgets.js';
import { ValidationError } from '../../core/errors.js';
import { echoValue } from '../../core/echo.js';
import { hashJson } from '../../support/hash.js';
import { parseRunInput } from '../../authoring/run-input.js';
import type { RunRef } from '../../core/run-ref.js';
import type { EngineDeps } from '../engine.js';
import { createRun, type StartRunRequest, type StartRunResult } from '../run-creation.js';
import { admissionPath, admitRun, keepsSlot } from '../admission-gate.js';

/** How long the engine waits past a started step's deadline before applying its policy, by default. */
export const DEFAULT_WORKFLOW_GRACE_MS = 30_000;

/**
 * Create a workflow run as any run is created (run_started at seq 1, then the head, then the
 * first tick; a retry redoes what is missing; the same id with another request is a conflict).
 * What it pins: the workflow's name and version, its input's and output's schemas, its budgets.
 * No code is called: the first step runs `run(ctx, input)` from the top.
 */
export async function startWorkflowRun(deps: EngineDeps, request: StartRunRequest, runId: string): Promise<StartRunResult> {
  const { registry } = deps;
  const name = request.workflow ?? '';
  const workflow = registry.workflow(name, request.version);
  if (!workflow) {
    const known = registry.workflowNames();
    const echo = (v: string) => echoValue(v, (t) => deps.codec.redactText(t));
    throw new ValidationError(`unknown workflow ${echo(name)}${request.version ? ` version ${echo(request.version)}` : ''}`, [
      { path: request.version && known.includes(name) ? 'version' : 'workflow', message: `not registered; known: ${known.join(', ') || 'none'}` },
    ]);
  }
  parseRunInput(workflow, request.input);
  const run: RunRef = { tenant: request.tenant, runId };
  // Admitted as any start (a child workflow runs under its parent's slot): admission-gate.ts.
  return admitRun(
    deps,
    run,
    admissionPath(request),
    () => createWorkflowRun(deps, request, run, workflow),
    (result) => keepsSlot(result.status),
  );
}

/** Everything a workflow run's start writes, once admitted. */
async function createWorkflowRun(
  deps: EngineDeps,
  request: StartRunRequest,
  run: RunRef,
  workflow: NonNullable<ReturnType<EngineDeps['registry']['workflow']>>,
): Promise<StartRunResult> {
  const { clock, codec } = deps;
  const runId = run.runId;
  const child = request.child;
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
  return createRun(deps, run, draft, requestHash);
}
