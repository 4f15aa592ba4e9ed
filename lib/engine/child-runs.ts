import { resolveBudgets } from '../core/budgets.js';
import { RunConflictError, RunNotFoundError, ValidationError } from '../core/errors.js';
import { InstructionsError } from '../authoring/instructions.js';
import { parseRunInput } from '../authoring/run-input.js';
import type { CallWait, PinnedTool } from '../core/events.js';
import type { InboxItem } from '../core/inbox.js';
import type { JsonValue } from '../core/json.js';
import type { CallState, RunState } from '../core/state.js';
import { RUN_ID_PATTERN, type RunRef } from '../core/run-ref.js';
import type { EngineDeps } from './engine.js';
import { sha256Hex } from '../support/hash.js';
import type { RunSession } from './run-session.js';
import { startRun } from './start-run.js';

/**
 * Child runs: an agent used as a tool (agentTool). The parent's call is a durable wait of kind
 * `child`; the handshake, in the order of its writes:
 * 1. parent appends tool_started {wait: {kind: 'child', runId, reserved, ...}}: the reservation is
 *    spent from that moment, and the child's id and budgets are fixed in the log;
 * 2. parent creates the child (startRun, idempotent on the id with the same request hash): a
 *    crash before or inside it is repaired by the next parent step (ensureChildren), which
 *    re-issues the very same create; a crash after it finds the child and creates nothing;
 * 3. the child runs as any run; its last step, while publishing its outcome (owed on its head
 *    until done, so the sweeper finishes it after a crash), puts `complete_call {via: 'child'}`
 *    with id `child-<callId>` into the parent's inbox and wakes the parent;
 * 4. the parent ingests that item once (the inbox id is remembered by fold) as the call's
 *    tool_result, replacing the reservation with what the child spent.
 * Cancelling the parent puts a cancel into each open child's inbox before run_cancelled.
 */

/** Shorter than this leaves room in the 80-character run id for `-c<seq>-<index>`. */
const READABLE_PARENT_MAX = 64;

/** The child's run id: a function of the parent's run id and the call id only. */
export function childRunId(parentRunId: string, callId: string): string {
  const readable = `${parentRunId}-c${callId}`;
  if (parentRunId.length <= READABLE_PARENT_MAX && RUN_ID_PATTERN.test(readable)) return readable;
  // Deep nesting or a long parent id: a hash keeps it short and still deterministic.
  return `c-${sha256Hex(`${parentRunId}\n${callId}`).slice(0, 40)}`;
}

export type ChildStart = { wait: Extract<CallWait, { kind: 'child' }> } | { error: { code: string; message: string } };

/**
 * The child's budgets: the agentTool's (over the child agent's own defaults), each capped by what
 * the parent has left now. Tokens and cost are reserved on the parent; steps and the deadline are
 * caps only (the parent's step counter counts its own model calls).
 */
export function childWait(deps: EngineDeps, state: RunState, call: CallState, pinned: PinnedTool, now: number): ChildStart {
  const wait = pinned.wait;
  if (wait?.kind !== 'child') return { error: { code: 'not_a_child_tool', message: `${pinned.name} starts no child run` } };
  const agent = deps.registry.agent(wait.agent.name, wait.agent.version);
  const configured = resolveBudgets({ ...agent?.budgets, ...wait.budgets }, now);
  const b = state.started.budgets;
  const u = state.usage;
  const left = {
    steps: b.maxSteps - u.steps,
    inputTokens: b.maxInputTokens - u.inputTokens,
    outputTokens: b.maxOutputTokens - u.outputTokens,
    costUsd: b.maxCostUsd - u.costUsd,
  };
  const empty = Object.entries(left).find(([, v]) => v <= 0);
  if (empty || now >= b.deadlineAt) {
    const what = empty ? `no ${empty[0]} left` : 'the deadline has passed';
    return { error: { code: 'budget_exceeded', message: `the parent cannot start child ${wait.agent.name}: ${what}` } };
  }
  const deadlineAt = Math.min(configured.deadlineAt, b.deadlineAt);
  return {
    wait: {
      kind: 'child',
      runId: childRunId(state.started.runId, call.callId),
      // Past the child's own deadline (when it fails by itself) plus grace, never past the parent's.
      until: Math.min(deadlineAt + state.started.graceMs, b.deadlineAt),
      reserved: {
        inputTokens: Math.min(configured.maxInputTokens, left.inputTokens),
        outputTokens: Math.min(configured.maxOutputTokens, left.outputTokens),
        costUsd: Math.min(configured.maxCostUsd, left.costUsd),
      },
      maxSteps: Math.min(configured.maxSteps, left.steps),
      deadlineAt,
    },
  };
}

/** Children this session has made sure of: one head read per child per step at most. */
const ensured = new WeakMap<RunSession, Set<string>>();

function ensuredOf(session: RunSession): Set<string> {
  let set = ensured.get(session);
  if (!set) ensured.set(session, (set = new Set()));
  return set;
}

/** The open child calls of the current turn. */
function openChildren(state: RunState): CallState[] {
  return state.turnCalls.map((id) => state.calls[id]).filter((c): c is CallState => c?.status === 'started' && c.wait?.kind === 'child');
}

/**
 * Create the child of a started child call (step 2). Idempotent: the request is rebuilt from the
 * log alone (the call's arguments and the wait's budgets), so every retry has the same hash.
 * Returns an error message when the id is taken by another request (a client chose it).
 */
export async function startChild(session: RunSession, call: CallState): Promise<string | { refused: { code: string; message: string } } | undefined> {
  const wait = call.wait;
  const pinned = session.state.started.tools.find((t) => t.name === call.name);
  if (wait?.kind !== 'child' || pinned?.wait?.kind !== 'child') return undefined;
  const input = await session.deps.codec.resolve(call.args);
  try {
    await startRun(session.deps, {
      tenant: session.run.tenant,
      runId: wait.runId,
      agent: pinned.wait.agent.name,
      version: pinned.wait.agent.version,
      input,
      child: {
        parent: { runId: session.run.runId, callId: call.callId },
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
    if (error instanceof RunConflictError) return `run id ${wait.runId} is taken by another run`;
    // The child refused to start (its input or its instructions): nothing ran, nothing to charge.
    if (error instanceof ValidationError || error instanceof InstructionsError) return { refused: childRefusal(pinned.wait.agent, error) };
    throw error;
  }
  ensuredOf(session).add(wait.runId);
  return undefined;
}

function childRefusal(agent: { name: string; version: string }, error: ValidationError | InstructionsError): { code: string; message: string } {
  const issues = error instanceof ValidationError && error.issues.length > 0 ? `: ${error.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}` : '';
  return {
    code: error.code === 'instructions_failed' ? 'child_instructions_failed' : 'child_input_invalid',
    message: `child ${agent.name}@${agent.version} refused to start: ${error.message}${issues}`,
  };
}

/**
 * The arguments of a child call are the child run's input: a call that does not fit the child
 * agent's input schema gets an error result before anything is reserved or started.
 */
async function childInputProblem(session: RunSession, call: CallState, pinned: PinnedTool): Promise<{ code: string; message: string } | undefined> {
  if (pinned.wait?.kind !== 'child') return undefined;
  const agent = session.deps.registry.agent(pinned.wait.agent.name, pinned.wait.agent.version);
  if (!agent?.input) return undefined;
  try {
    parseRunInput(agent, await session.deps.codec.resolve(call.args));
    return undefined;
  } catch (error) {
    if (error instanceof ValidationError) return childRefusal(pinned.wait.agent, error);
    throw error;
  }
}

/**
 * Start a child call (steps 1 and 2): the wait with its reservation, then the child itself; a
 * call the parent cannot afford gets an error result instead, and no child.
 */
export async function startChildCall(session: RunSession, call: CallState, attempt: number, pinned: PinnedTool): Promise<void> {
  const invalid = await childInputProblem(session, call, pinned);
  const start = invalid ? { error: invalid } : childWait(session.deps, session.state, call, pinned, session.deps.clock.now());
  if ('error' in start) {
    const { code, message } = start.error;
    await session.append({
      type: 'tool_result',
      callId: call.callId,
      ok: false,
      output: { kind: 'inline', value: { error: code, message } },
      source: 'validation',
      errorCode: code,
    });
    return;
  }
  await session.append({ type: 'tool_started', callId: call.callId, attempt, notAfter: start.wait.until, wait: start.wait });
  const started = session.state.calls[call.callId] ?? call;
  const conflict = await startChild(session, started);
  if (conflict) await appendConflict(session, call.callId, conflict);
}

async function appendConflict(session: RunSession, callId: string, conflict: string | { refused: { code: string; message: string } }): Promise<void> {
  if (typeof conflict !== 'string') {
    // As a child result that spent nothing: the reservation made at tool_started is given back.
    const { code, message } = conflict.refused;
    await session.append({
      type: 'tool_result',
      callId,
      ok: false,
      output: { kind: 'inline', value: { error: code, message } },
      source: 'child',
      errorCode: code,
      childUsage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    });
    return;
  }
  const message = conflict;
  await session.append({
    type: 'tool_result',
    callId,
    ok: false,
    output: { kind: 'inline', value: { error: 'child_conflict', message } },
    source: 'timeout',
    errorCode: 'child_conflict',
  });
}

/**
 * Make sure every open child call has its child (the repair of a crash between tool_started and
 * the create). A child whose id another run took gets an error result the model sees.
 */
export async function ensureChildren(session: RunSession): Promise<boolean> {
  const done = ensuredOf(session);
  let appended = false;
  for (const call of openChildren(session.state)) {
    const wait = call.wait;
    if (wait?.kind !== 'child' || done.has(wait.runId)) continue;
    const head = await session.deps.heads.getHead({ tenant: session.run.tenant, runId: wait.runId });
    if (head) {
      done.add(wait.runId);
      continue;
    }
    const conflict = await startChild(session, call);
    if (conflict) {
      await appendConflict(session, call.callId, conflict);
      appended = true;
    }
  }
  return appended;
}

/** Ask one child to stop (idempotent: one cancel item per child from its parent). */
export async function cancelChild(session: RunSession, runId: string, reason: string): Promise<void> {
  const child: RunRef = { tenant: session.run.tenant, runId };
  try {
    await session.deps.inbox.put(child, { id: 'parent-cancel', kind: 'cancel', by: `run:${session.run.runId}`, reason });
  } catch (error) {
    // Never created (the parent stopped before its create landed): nothing runs, nothing to stop.
    if (error instanceof RunNotFoundError) return;
    throw error;
  }
  await session.deps.queue.enqueue(child, { dedupeId: `${runId}:inbox:parent-cancel` });
}

/** Cancel cascades: every open child is asked to stop before the parent records its cancel. */
export async function cancelChildren(session: RunSession): Promise<void> {
  for (const call of openChildren(session.state)) {
    if (call.wait?.kind === 'child') await cancelChild(session, call.wait.runId, `parent run ${session.run.runId} was cancelled`);
  }
}

/** What the parent's call gets from a child that ended: its output or answer, or its failure as an error. */
async function childAnswer(deps: EngineDeps, state: RunState): Promise<{ ok: boolean; output: JsonValue } | undefined> {
  const o = state.outcome;
  if (!o) return undefined;
  // A child with an output schema answers with its parsed output (JSON), not its answer's text.
  if (o.type === 'completed') return { ok: true, output: await deps.codec.resolve(o.output ?? o.answer) };
  if (o.type === 'failed') return { ok: false, output: { error: o.code, message: o.message, childRunId: state.started.runId } };
  return { ok: false, output: { error: 'child_cancelled', message: `child run ${state.started.runId} was cancelled`, childRunId: state.started.runId } };
}

/**
 * Step 3: a child that ended tells its parent, through the parent's inbox, and wakes it. Called
 * while the outcome is owed (before notifiedSeq moves), so a crash anywhere here is finished by
 * the next holder of the child; the fixed inbox id makes every repeat a no-op for the parent.
 */
export async function deliverToParent(deps: EngineDeps, run: RunRef, state: RunState): Promise<void> {
  const parent = state.started.parent;
  if (!parent) return;
  const answer = await childAnswer(deps, state);
  if (!answer) return;
  const parentRef: RunRef = { tenant: run.tenant, runId: parent.runId };
  // A large answer goes to the parent's own blob prefix first (content-addressed: a repeat is harmless).
  const body = await deps.codec.encode(parentRef, answer.output, deps.checkpoints);
  const item: InboxItem = {
    id: `child-${parent.callId}`,
    kind: 'complete_call',
    by: `run:${run.runId}`,
    callId: parent.callId,
    via: 'child',
    childRunId: run.runId,
    usage: { inputTokens: state.usage.inputTokens, outputTokens: state.usage.outputTokens, costUsd: state.usage.costUsd },
    ok: answer.ok,
    output: body.kind === 'inline' ? body.value : null,
    ...(body.kind === 'blob' ? { body } : {}),
  };
  try {
    await deps.inbox.put(parentRef, item);
  } catch (error) {
    if (error instanceof RunNotFoundError) return; // the parent is gone (expired): nobody to tell
    throw error;
  }
  await deps.queue.enqueue(parentRef, { dedupeId: `${parent.runId}:inbox:${item.id}` });
}
