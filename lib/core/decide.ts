import type { Body } from './body.js';
import { checkModelBudget, checkSummaryBudget } from './budgets.js';
import { controlStep } from './control.js';
import { agentPins, type AttentionReason, type Policy } from './events.js';
import type { CallState, RunState } from './state.js';
import { OUTPUT_INVALID } from './output.js';
import { plural } from './plural.js';
import { unhandled } from './unhandled.js';

export interface DecideContext {
  now: number;
  /** Whether code is registered for this pinned tool contract (name + schema hash). */
  hasTool(name: string, schemaHash: string): boolean;
  hasModel(modelId: string): boolean;
  /** Attempts of a rerun/idempotency_key call before it stops being retried. */
  maxToolAttempts: number;
  /**
   * Starts in a row of a read-only (rerun) call that all ended with no result (its worker died or
   * lost its lease inside it) before the call parks for a person; default maxToolAttempts. A
   * failing read gets its error result at once; a read that never finishes is never turned into
   * an error, which would change the run's answer because of the infrastructure (limits.ts
   * MAX_CRASHED_TOOL_ATTEMPTS). Counted since a person last answered rerun.
   */
  maxCrashedToolAttempts?: number;
}

export type Action =
  | { kind: 'done' }
  /** `output`: the parsed structured output, when the agent has an output schema. */
  | { kind: 'complete'; answer: Body; output?: Body }
  | { kind: 'fail'; code: string; message: string }
  | { kind: 'cancel'; unresolved: string[] }
  | { kind: 'call_model'; step: number; maxOutputTokens: number; reserved: { inputTokens: number; outputTokens: number; costUsd: number } }
  /** The context policy's summary is due: fold the older turns into it (a model call, reserved first). */
  | { kind: 'summarize'; step: number; turns: number; maxOutputTokens: number; reserved: { inputTokens: number; outputTokens: number; costUsd: number } }
  /** Calls that can never run (unknown tool, unparseable arguments): error results for the model. */
  | { kind: 'reject_calls'; rejects: { callId: string; code: string; message: string }[] }
  /** Approvals whose time ran out: each becomes an expiry, which rejects the call. */
  | { kind: 'expire_approvals'; callIds: string[] }
  /** Durable waits whose time is up: a timeout result (signal) or the timer's completion. */
  | { kind: 'complete_waits'; callIds: string[] }
  /** Append tool_started for each (attempt = previous + 1), then run them concurrently. */
  | { kind: 'run_tools'; calls: { callId: string; attempt: number }[] }
  | { kind: 'verify'; callId: string }
  | { kind: 'attention'; reason: AttentionReason; callId?: string; detail: string }
  /**
   * Nothing to do before `until` (a started call may still be running elsewhere, a durable wait
   * or an approval has a deadline), or, without `until`, until an inbox item arrives.
   */
  | { kind: 'wait'; until?: number; reason: string }
  /** Open attention: nothing happens until a person answers. */
  | { kind: 'park'; reasons: string[] };

/**
 * The next action for a run. Pure: same state and context, same answer, live and on resume.
 *
 * Priority, first match wins:
 * 1. the run has an outcome → `done`;
 * 2. an operator failed it → `fail` (failed_by_operator).
 * Then every call of the current turn is classified (a call with an open attention is blocked;
 * once a cancel is recorded no call starts, and rerun/idempotency_key calls are abandoned; a
 * started call with no result waits for notAfter + grace, then its policy decides), and:
 * Approvals and durable waits (control.ts) are classified first, per call: an approval to
 * request or an expired one, a due wait or timer; then:
 * 3. calls that can never run (arguments not JSON, unknown tool) → `reject_calls`, error results
 *    the model sees;
 * 4. a new attention (no implementation for a pinned tool, an unknown outcome, a keyed write
 *    started too often, a read whose every start died with its worker) → `attention`, or `park`
 *    if that attention is already open;
 * 5. a cancel is recorded → `wait` while a verify/escalate call may still be running, then
 *    `cancel` with the calls left unresolved;
 * 6. a started verify-policy call past its deadline → `verify`;
 * 7. a run-level attention (missing model or tool version, stalled model) → `park`;
 * 8. calls to start or restart → `run_tools`, or `fail` (budget_exceeded:deadline) past the deadline;
 * 9. a started call still inside notAfter + grace → `wait` until the earliest;
 * 10. calls blocked on an open attention → `park`.
 * Every call of the turn has a result:
 * 11. the model gave its answer → `complete` (unless a follow-up message waits: then the model);
 *     under an output schema only an answer that fits completes (with its output); one that does
 *     not → the model again (the repair message is in the conversation), or, once the pinned
 *     repairs are used, `fail` (output_invalid);
 * 12. the last model call failed for good → `fail` with its code;
 * 13. two model calls in a row got no response → `attention` (model_stalled);
 * 14. the pinned model is not available → `attention` (missing_model);
 * 15. the context policy's summary is due (core/context-policy.ts) → `attention` (missing_model)
 *     if the summary model is not available, else `summarize` when the summary call fits the
 *     budgets (one that does not is skipped: the turn goes on with the longer prompt);
 * 16. the next call would break a budget → `fail` (budget_exceeded:*);
 * 17. otherwise → `call_model`, reserving its upper bound first.
 */
export function decide(state: RunState, ctx: DecideContext): Action {
  if (state.outcome) return { kind: 'done' };
  if (state.failRequested) {
    return { kind: 'fail', code: 'failed_by_operator', message: `failed by ${state.failRequested.by}` };
  }
  const cancelling = state.cancel !== undefined;
  const grace = state.started.graceMs;

  const rejects: { callId: string; code: string; message: string }[] = [];
  const starts: { callId: string; attempt: number }[] = [];
  const attentions: Action[] = [];
  const verifies: string[] = [];
  const waits: number[] = [];
  const unresolved: string[] = [];
  const expired: string[] = [];
  const dueWaits: string[] = [];
  let awaiting = 0;
  let blocked = false;

  for (const callId of state.turnCalls) {
    const call = state.calls[callId];
    if (!call || call.status === 'done') continue;
    // Approvals and durable waits first: they hold no Lambda and have rules of their own.
    const control = controlStep(call, ctx.now, cancelling);
    if (control) {
      if (control.kind === 'expire') expired.push(callId);
      else if (control.kind === 'complete') dueWaits.push(callId);
      else if (control.kind === 'await') {
        awaiting++;
        if (control.until !== undefined) waits.push(control.until);
      }
      continue;
    }
    const pinned = state.started.tools.find((t) => t.name === call.name);
    if (state.attention.some((a) => a.callId === callId)) {
      blocked = true;
      unresolved.push(callId);
      continue;
    }
    if (call.status === 'decided') {
      if (cancelling) continue; // no new calls once a cancel is recorded
      if (call.argsError !== undefined) {
        rejects.push({ callId, code: 'invalid_arguments', message: `invalid arguments: ${call.argsError}` });
      } else if (!pinned) {
        const known = state.started.tools.map((t) => t.name).join(', ');
        rejects.push({ callId, code: 'unknown_tool', message: `unknown tool "${call.name}"; available: ${known}` });
      } else if (!ctx.hasTool(pinned.name, pinned.schemaHash)) {
        attentions.push(missingTool(pinned.name, pinned.version, pinned.schemaHash));
      } else {
        starts.push({ callId, attempt: 1 });
      }
      continue;
    }
    // Started, no result: the ambiguous case. Its policy applies only after notAfter + grace.
    const policy = pinned?.policy ?? 'escalate';
    const readyAt = (call.notAfter ?? 0) + grace;
    if (call.rerunApproved && !cancelling) {
      starts.push({ callId, attempt: call.attempt + 1 });
      continue;
    }
    if (cancelling && (policy === 'rerun' || policy === 'idempotency_key')) {
      // Cancel aborts these; a read-only one is simply abandoned, a keyed write may still land.
      if (policy === 'idempotency_key') unresolved.push(callId);
      continue;
    }
    if (ctx.now < readyAt) {
      waits.push(readyAt);
      unresolved.push(callId);
      continue;
    }
    if (cancelling) {
      unresolved.push(callId);
      continue;
    }
    decideStarted(call, policy, ctx, { starts, attentions, verifies, pinnedOk: pinned !== undefined && ctx.hasTool(pinned.name, pinned.schemaHash) });
  }

  if (rejects.length > 0) return { kind: 'reject_calls', rejects };
  if (expired.length > 0) return { kind: 'expire_approvals', callIds: expired };
  if (dueWaits.length > 0) return { kind: 'complete_waits', callIds: dueWaits };
  const firstAttention = attentions[0];
  if (firstAttention) return dedupeAttention(state, firstAttention) ?? { kind: 'park', reasons: openReasons(state) };

  if (cancelling) {
    if (waits.length > 0) return { kind: 'wait', until: Math.min(...waits), reason: 'cancel waits for verify/escalate calls to time out' };
    return { kind: 'cancel', unresolved: [...new Set(unresolved)] };
  }
  if (verifies[0] !== undefined) return { kind: 'verify', callId: verifies[0] };

  // A run-level park (missing version, stalled model) holds everything until a person answers.
  const runLevel = state.attention.filter((a) => a.callId === undefined);
  if (runLevel.length > 0) return { kind: 'park', reasons: openReasons(state) };

  if (starts.length > 0) {
    if (ctx.now >= state.started.budgets.deadlineAt) {
      return { kind: 'fail', code: 'budget_exceeded:deadline', message: 'deadline passed before tools could run' };
    }
    return { kind: 'run_tools', calls: starts };
  }
  if (awaiting > 0) {
    const until = waits.length > 0 ? Math.min(...waits) : undefined;
    return { kind: 'wait', ...(until !== undefined ? { until } : {}), reason: 'calls wait for an approval, a signal or a timer' };
  }
  if (waits.length > 0) return { kind: 'wait', until: Math.min(...waits), reason: 'a started call may still be running' };
  if (blocked) return { kind: 'park', reasons: openReasons(state) };

  // Every call of the turn has a result. A follow-up message means one more model call.
  if (state.answered && state.pendingMessages.length === 0) {
    const checked = state.started.output ? state.answerOutput : undefined;
    if (!checked) return { kind: 'complete', answer: state.lastText ?? { kind: 'inline', value: '' } };
    if (checked.ok) return { kind: 'complete', answer: state.lastText ?? { kind: 'inline', value: '' }, output: checked.output };
    // An answer that does not fit: the repair message is in the conversation (fold), and the
    // model is called again under the same budgets, until the pinned number of repairs is used.
    const used = state.outputRepairs ?? 0;
    const max = state.started.output?.maxRepairs ?? 0;
    if (used > max) {
      return {
        kind: 'fail',
        code: OUTPUT_INVALID,
        message:
          `the answer does not match the output schema after ${plural(max, 'repair')} (the last answer is the model_response at seq ${checked.seq}): ${checked.error}`.slice(
            0,
            1000,
          ),
      };
    }
  }
  if (state.lastModelFailure && !state.lastModelFailure.retryable) {
    return { kind: 'fail', code: state.lastModelFailure.code, message: state.lastModelFailure.message };
  }
  if (state.unansweredModelCalls >= 2) {
    return {
      kind: 'attention',
      reason: 'model_stalled',
      detail: `${state.unansweredModelCalls} consecutive model calls produced no response${
        state.lastModelFailure ? ` (last: ${state.lastModelFailure.code}: ${state.lastModelFailure.message})` : ''
      }`,
    };
  }
  const { model } = agentPins(state.started);
  if (!ctx.hasModel(model.id)) {
    return { kind: 'attention', reason: 'missing_model', detail: `model ${model.id} is not available` };
  }
  const summary = checkSummaryBudget(state, ctx.now);
  if (summary) {
    const model = state.started.context?.summarize?.model ?? '';
    if (!ctx.hasModel(model)) return { kind: 'attention', reason: 'missing_model', detail: `summary model ${model} is not available` };
    if (summary.ok)
      return { kind: 'summarize', step: state.usage.steps + 1, turns: summary.turns, maxOutputTokens: summary.maxOutputTokens, reserved: summary.reserved };
  }
  const budget = checkModelBudget(state, ctx.now);
  if (!budget.ok) return { kind: 'fail', code: budget.code, message: budget.message };
  return { kind: 'call_model', step: state.usage.steps + 1, maxOutputTokens: budget.maxOutputTokens, reserved: budget.reserved };
}

/** What the policy of a started call (or workflow step) needs to know about it. */
export type StartedCall = Pick<CallState, 'callId' | 'name' | 'attempt' | 'rerunFrom' | 'verified' | 'landedLooks'>;

/**
 * The policy of a call that started and has no result, once its notAfter + grace has passed: start
 * it again, look (verify), or ask a person. Shared by an agent's tool calls and a workflow's steps.
 */
export function decideStarted(
  call: StartedCall,
  policy: Policy,
  ctx: Pick<DecideContext, 'maxToolAttempts' | 'maxCrashedToolAttempts'>,
  out: { starts: { callId: string; attempt: number }[]; attentions: Action[]; verifies: string[]; pinnedOk: boolean },
): void {
  const { callId } = call;
  switch (policy) {
    case 'rerun': {
      // Only deaths reach here (a read that fails has its error result): the infrastructure's
      // fault, or a tool that kills its worker. Neither may become an error the model answers.
      const crashed = call.attempt - (call.rerunFrom ?? 0);
      if (crashed >= (ctx.maxCrashedToolAttempts ?? ctx.maxToolAttempts)) {
        out.attentions.push({
          kind: 'attention',
          reason: 'tool_attempts_exhausted',
          callId,
          detail: `${call.name} (${callId}) started ${crashed} times in a row with no result: its worker died or lost its lease inside it every time (a kill storm, or a tool that kills its worker); read-only, so rerun it or mark it failed`,
        });
      } else if (out.pinnedOk) out.starts.push({ callId, attempt: call.attempt + 1 });
      else out.attentions.push({ kind: 'attention', reason: 'missing_tool_version', detail: `no implementation for ${call.name}` });
      return;
    }
    case 'idempotency_key':
      if (call.attempt >= ctx.maxToolAttempts) {
        out.attentions.push({
          kind: 'attention',
          reason: 'tool_attempts_exhausted',
          callId,
          detail: `${call.name} (${callId}) started ${call.attempt} times with no result; the keyed write may or may not have landed`,
        });
      } else if (out.pinnedOk) out.starts.push({ callId, attempt: call.attempt + 1 });
      else out.attentions.push({ kind: 'attention', reason: 'missing_tool_version', detail: `no implementation for ${call.name}` });
      return;
    case 'verify':
      // Not looked at since this start; or verify() said landed and its worker died before the
      // result that answer carries was written: the result is not in the log, so look again
      // (verify only looks) rather than park a call known to have landed. Once: a result lost
      // twice may be one that cannot be written, and a person decides.
      if (call.verified === undefined || (call.verified === 'landed' && (call.landedLooks ?? 0) < 2)) out.verifies.push(callId);
      else if (call.verified === 'not_landed' && call.attempt < ctx.maxToolAttempts && out.pinnedOk) {
        out.starts.push({ callId, attempt: call.attempt + 1 });
      } else {
        out.attentions.push({
          kind: 'attention',
          reason: 'unknown_outcome',
          callId,
          detail: `${call.name} (${callId}): verify said ${call.verified} after ${call.attempt} attempt(s)`,
        });
      }
      return;
    case 'escalate':
      out.attentions.push({
        kind: 'attention',
        reason: 'unknown_outcome',
        callId,
        detail: `${call.name} (${callId}) started with no result; it may have happened: a person must decide`,
      });
      return;
    default:
      // Every policySchema member has its case above: a new one is a compile error here.
      return unhandled(policy, 'policy');
  }
}

function missingTool(name: string, version: string, hash: string): Action {
  return {
    kind: 'attention',
    reason: 'missing_tool_version',
    detail: `no implementation registered for tool ${name}@${version} with schema ${hash.slice(0, 12)}`,
  };
}

/** Never raise the same attention twice: if it is already open, the run is simply parked. */
function dedupeAttention(state: RunState, action: Action): Action | undefined {
  if (action.kind !== 'attention') return action;
  const open = state.attention.some((a) => a.reason === action.reason && a.callId === action.callId);
  return open ? undefined : action;
}

function openReasons(state: RunState): string[] {
  return state.attention.map((a) => `${a.reason}${a.callId ? `(${a.callId})` : ''}: ${a.detail}`);
}
