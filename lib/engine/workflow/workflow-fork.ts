import { ValidationError } from '../../core/errors.js';
import { echoValue } from '../../core/echo.js';
import type { EventOf } from '../../core/events.js';
import type { JsonValue } from '../../core/json.js';
import type { RunState } from '../../core/state.js';
import { parseRunInput } from '../../authoring/run-input.js';
import type { WorkflowDefinition } from '../../authoring/workflow-types.js';
import { ForkConflictError } from '../control-errors.js';
import type { EngineDeps } from '../engine.js';

/**
 * Forking a workflow run (fork.ts does the writes, for agent and workflow runs alike). A fork
 * copies the source's events up to `atSeq` and continues live: its code is replayed from the top
 * over the copied results, and every operation past them runs again under the fork's own ids (a
 * step's idempotency key and a child run's id carry the fork's run id), so nothing the source did
 * is repeated by the copy and nothing the fork does lands on the source's keys.
 *
 * Where a fork may start: at 1 (the run again from the top), or at a seq where every operation
 * the code asked for has its result: nothing in flight that the fork would have to adopt (a step
 * started by the source's worker, a child run that belongs to the source, a retry's back-off). A
 * replaced input only at 1: the copied results answered the old input, and the code asked for
 * them because of it.
 */
export function checkWorkflowBoundary(state: RunState, atSeq: number, replacesInput: boolean): void {
  if (replacesInput && atSeq !== 1) {
    throw new ForkConflictError(`a workflow run's input can be replaced only by a fork at seq 1: the results up to ${atSeq} answered the old input`);
  }
  if (atSeq === 1) return;
  if (state.outcome) throw new ForkConflictError(`seq ${atSeq} is the end of the run: fork at an earlier seq`);
  const open = (state.workflow?.ops ?? []).find((op) => op !== null && op.status !== 'done');
  if (open) {
    throw new ForkConflictError(
      `seq ${atSeq} is not a fork point: operation ${open.op} (${open.kind} ${open.name}) is ${open.status === 'retrying' ? 'waiting to retry' : 'in flight'} there; ` +
        `fork at seq ${open.seq - 1}, before it started, or after its result`,
    );
  }
  if (state.attention.length > 0 || state.cancel) {
    throw new ForkConflictError(`seq ${atSeq} is not a fork point: the run is ${state.cancel ? 'cancelling' : 'parked'} there`);
  }
}

/** The workflow a fork pins: the source's version, or the one asked for (registered here). */
export function forkedWorkflow(deps: EngineDeps, source: EventOf<'run_started'>, version: string | undefined): WorkflowDefinition | undefined {
  if (version === undefined) return undefined;
  const workflow = deps.registry.workflow(source.agent.name, version);
  if (!workflow) {
    const echo = echoValue(version, (t) => deps.codec.redactText(t));
    throw new ValidationError(`unknown version ${echo} of workflow ${source.agent.name}`, [{ path: 'version', message: 'not registered' }]);
  }
  return workflow;
}

/** A fork's new input must fit the input schema of the workflow version it pins. */
export function checkWorkflowForkInput(deps: EngineDeps, source: EventOf<'run_started'>, repinned: WorkflowDefinition | undefined, input: JsonValue): void {
  const workflow = repinned ?? deps.registry.workflow(source.agent.name, source.agent.version);
  if (workflow) {
    parseRunInput(workflow, input);
    return;
  }
  if (source.inputSchema) {
    throw new ValidationError(`workflow ${source.agent.name}@${source.agent.version} is not registered here: its input schema cannot be checked`, [
      { path: 'input', message: 'cannot be checked against the pinned input schema' },
    ]);
  }
}

/** What a workflow fork's run_started pins besides its input, budgets and fork mark. */
export function workflowForkPins(source: EventOf<'run_started'>, repinned: WorkflowDefinition | undefined) {
  if (!repinned) {
    return {
      agent: source.agent,
      workflow: source.workflow ?? {},
      tools: [],
      graceMs: source.graceMs,
      ...(source.inputSchema ? { inputSchema: source.inputSchema } : {}),
    };
  }
  return {
    agent: { name: repinned.name, version: repinned.version },
    workflow: repinned.pinnedOutput ? { output: repinned.pinnedOutput } : {},
    tools: [],
    graceMs: repinned.graceMs ?? source.graceMs,
    ...(repinned.inputSchema ? { inputSchema: repinned.inputSchema } : {}),
  };
}
