import { DEFAULT_BUDGETS, resolveBudgets, WORKFLOW_CEILING, WORKFLOW_DEFAULT_BUDGETS, type BudgetLimits } from '../../core/budgets.js';

/** A child workflow's defaults: an agent's spend, a workflow's steps and deadline. */
const CHILD_WORKFLOW_DEFAULTS: BudgetLimits = {
  ...DEFAULT_BUDGETS,
  maxSteps: WORKFLOW_DEFAULT_BUDGETS.maxSteps,
  deadlineSeconds: WORKFLOW_DEFAULT_BUDGETS.deadlineSeconds,
};
import { RunConflictError, ValidationError } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import { opCallId } from '../../core/workflow-events.js';
import type { OpState } from '../../core/workflow-state.js';
import { InstructionsError } from '../../authoring/instructions.js';
import { parseRunInput } from '../../authoring/run-input.js';
import { cancelChild, childRunId } from '../child-runs.js';
import type { RunSession } from '../run-session.js';
import { startRun } from '../start-run.js';
import type { Driver } from './driver-port.js';
import type { OpRequest } from './op-specs.js';
import { notJson } from './step-execution.js';

/**
 * ctx.agent / ctx.workflow: a child run, the handshake of an agent's child tool call (child-runs.ts)
 * with an operation in place of the call:
 * 1. op_started {wait: {kind: 'child', runId, definition, input, reserved, ...}}: the child's id,
 *    input and budgets are fixed in the log, and its tokens and cost are spent from this run;
 * 2. the child is created (startRun, idempotent on the id and request hash); a crash before or
 *    inside it is repaired when the operation is next acted on (ensureChild: the same create);
 * 3. the child's last step puts its outcome into this run's inbox (`child-op-<n>`) and wakes it;
 * 4. this run ingests it once as the operation's op_result, what the child spent replacing the reservation.
 */
export async function startChildOp(driver: Driver, request: OpRequest): Promise<void> {
  const { session } = driver;
  const { deps, state } = session;
  const spec = request.spec.kind === 'child' ? request.spec : undefined;
  if (!spec) return;
  const target = spec.definition.kind === 'agent' ? spec.definition.agent : spec.definition.workflow;
  const kind = spec.definition.kind;
  const base = { type: 'op_result' as const, op: request.op, kind: 'child' as const, name: request.name };
  const refuse = async (code: string, message: string): Promise<void> => {
    await session.append({ ...base, ok: false, source: 'validation', errorCode: code, output: { kind: 'inline', value: { error: code, message } } });
  };
  const registered = kind === 'agent' ? deps.registry.agent(target.name, target.version) : deps.registry.workflow(target.name, target.version);
  if (!registered) {
    return refuse(
      'child_not_registered',
      `${kind} ${target.name}@${target.version} is not registered: list every agent and workflow a workflow starts in defineAgents`,
    );
  }
  const problem = notJson(spec.input);
  if (problem || spec.input === undefined) return refuse('child_input_invalid', `the input of ${target.name} is not JSON: ${problem ?? 'undefined'}`);
  try {
    parseRunInput(target, spec.input);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const issues = error.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
    return refuse('child_input_invalid', `${error.message}${issues ? `: ${issues}` : ''}`);
  }
  const now = deps.clock.now();
  // What the child may spend is reserved from this run now: its `budgets` option, else the child's
  // own, else an agent's defaults (a child workflow too: a sub-task, not a whole job's budget).
  const configured =
    kind === 'workflow'
      ? resolveBudgets({ ...target.budgets, ...spec.options.budgets }, now, CHILD_WORKFLOW_DEFAULTS, WORKFLOW_CEILING)
      : resolveBudgets({ ...target.budgets, ...spec.options.budgets }, now);
  const b = state.started.budgets;
  const u = state.usage;
  const left = { inputTokens: b.maxInputTokens - u.inputTokens, outputTokens: b.maxOutputTokens - u.outputTokens, costUsd: b.maxCostUsd - u.costUsd };
  const empty = Object.entries(left).find(([, v]) => v <= 0);
  if (empty) {
    const held = state.workflow!.ops.filter((o) => o?.status === 'started' && o.wait?.kind === 'child').length;
    return refuse(
      'budget_exceeded',
      `this run cannot start ${target.name}: no ${empty[0]} left${held > 0 ? ` (${held} running children hold their reservations)` : ''}; give the child smaller budgets (ctx.${kind}(..., { budgets })) or this workflow larger ones`,
    );
  }
  const deadlineAt = Math.min(configured.deadlineAt, b.deadlineAt);
  const until = Math.min(deadlineAt + state.started.graceMs, b.deadlineAt);
  await session.append({
    type: 'op_started',
    op: request.op,
    kind: 'child',
    name: request.name,
    attempt: 1,
    notAfter: until,
    wait: {
      kind: 'child',
      runId: childRunId(state.started.runId, opCallId(request.op)),
      definition: { kind, name: target.name, version: target.version },
      input: { kind: 'inline', value: spec.input as JsonValue },
      until,
      reserved: {
        inputTokens: Math.min(configured.maxInputTokens, left.inputTokens),
        outputTokens: Math.min(configured.maxOutputTokens, left.outputTokens),
        costUsd: Math.min(configured.maxCostUsd, left.costUsd),
      },
      maxSteps: configured.maxSteps,
      deadlineAt,
    },
  });
  const started = driver.opAt(request.op);
  if (started) await createChild(session, started);
}

/** Children this session has made sure of: one head read per child per step at most. */
const ensured = new WeakMap<RunSession, Set<string>>();

/** The repair of a crash between op_started and the child's create: create it now (the same request). */
export async function ensureChild(driver: Driver, op: OpState): Promise<void> {
  const { session } = driver;
  const wait = op.wait;
  if (wait?.kind !== 'child') return;
  let done = ensured.get(session);
  if (!done) ensured.set(session, (done = new Set()));
  if (done.has(wait.runId)) return;
  const head = await session.deps.heads.getHead({ tenant: session.run.tenant, runId: wait.runId });
  if (!head) await createChild(session, op);
  done.add(wait.runId);
}

/** Create the child from what the log holds alone, so every retry has the same request hash. */
async function createChild(session: RunSession, op: OpState): Promise<void> {
  const wait = op.wait;
  if (wait?.kind !== 'child') return;
  const input = await session.deps.codec.resolve(wait.input);
  const base = { type: 'op_result' as const, op: op.op, kind: 'child' as const, name: op.name, source: 'child' as const, ok: false };
  const nothingSpent = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  try {
    await startRun(session.deps, {
      tenant: session.run.tenant,
      runId: wait.runId,
      ...(wait.definition.kind === 'agent' ? { agent: wait.definition.name } : { workflow: wait.definition.name }),
      version: wait.definition.version,
      input,
      child: {
        parent: { runId: session.run.runId, callId: opCallId(op.op) },
        budgets: {
          maxSteps: wait.maxSteps,
          maxInputTokens: wait.reserved.inputTokens,
          maxOutputTokens: wait.reserved.outputTokens,
          maxCostUsd: wait.reserved.costUsd,
          deadlineAt: wait.deadlineAt,
        },
      },
    });
  } catch (error) {
    if (error instanceof RunConflictError) {
      const message = `run id ${wait.runId} is taken by another run`;
      await session.append({
        ...base,
        errorCode: 'child_conflict',
        childUsage: nothingSpent,
        output: { kind: 'inline', value: { error: 'child_conflict', message } },
      });
      return;
    }
    if (error instanceof ValidationError || error instanceof InstructionsError) {
      const message = `child ${wait.definition.name}@${wait.definition.version} refused to start: ${error.message}`;
      await session.append({
        ...base,
        errorCode: 'child_input_invalid',
        childUsage: nothingSpent,
        output: { kind: 'inline', value: { error: 'child_input_invalid', message } },
      });
      return;
    }
    throw error;
  }
  let done = ensured.get(session);
  if (!done) ensured.set(session, (done = new Set()));
  done.add(wait.runId);
}

/** Ask a child to stop (cancel cascades; a parent that stopped waiting). */
export function cancelChildRun(session: RunSession, runId: string, reason: string): Promise<void> {
  return cancelChild(session, runId, reason);
}
