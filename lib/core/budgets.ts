import { attachmentChars } from './attachments.js';
import { bodySize } from './body.js';
import { agentPins, type Budgets, type Price } from './events.js';
import type { LoggedMessage } from './messages.js';
import { MessageMemo } from './message-memo.js';
import { contextPlan, elidedToolMessage, estimateSummaryTokens, messageFate, summaryDue, summaryPreamble, type ContextPlan } from './context-policy.js';
import type { RunState } from './state.js';
import { plural } from './plural.js';

/** Budgets a request may set; absent fields take the defaults, and no field may exceed the ceiling. */
export interface BudgetRequest {
  maxSteps?: number;
  maxInputTokens?: number;
  maxOutputTokens?: number;
  maxCostUsd?: number;
  /** Seconds from the start of the run. */
  deadlineSeconds?: number;
}

export interface BudgetLimits {
  maxSteps: number;
  maxInputTokens: number;
  maxOutputTokens: number;
  maxCostUsd: number;
  deadlineSeconds: number;
}

export const DEFAULT_BUDGETS: BudgetLimits = {
  maxSteps: 50,
  maxInputTokens: 2_000_000,
  maxOutputTokens: 200_000,
  maxCostUsd: 10,
  deadlineSeconds: 24 * 3600,
};

export const DEFAULT_CEILING: BudgetLimits = {
  maxSteps: 1_000,
  maxInputTokens: 50_000_000,
  maxOutputTokens: 5_000_000,
  maxCostUsd: 500,
  deadlineSeconds: 30 * 24 * 3600,
};

/**
 * A workflow's budgets: `maxSteps` counts its operations (AWS Lambda durable functions stop an
 * execution at 25,000; a workflow here is bounded by its budget, up to a million), its tokens and
 * cost are what its child agents spend, and its deadline is long (workflows wait days for people).
 */
export const WORKFLOW_DEFAULT_BUDGETS: BudgetLimits = {
  maxSteps: 10_000,
  maxInputTokens: 20_000_000,
  maxOutputTokens: 2_000_000,
  maxCostUsd: 100,
  deadlineSeconds: 30 * 24 * 3600,
};

export const WORKFLOW_CEILING: BudgetLimits = {
  maxSteps: 1_000_000,
  maxInputTokens: 500_000_000,
  maxOutputTokens: 50_000_000,
  maxCostUsd: 5_000,
  deadlineSeconds: 366 * 24 * 3600,
};

/** Budgets are mandatory: defaults fill the gaps and the tenant ceiling clamps every field. */
export function resolveBudgets(
  requested: BudgetRequest | undefined,
  now: number,
  defaults: BudgetLimits = DEFAULT_BUDGETS,
  ceiling: BudgetLimits = DEFAULT_CEILING,
): Budgets {
  const pick = (key: keyof BudgetLimits) => Math.min(requested?.[key] ?? defaults[key], ceiling[key]);
  return {
    maxSteps: pick('maxSteps'),
    maxInputTokens: pick('maxInputTokens'),
    maxOutputTokens: pick('maxOutputTokens'),
    maxCostUsd: pick('maxCostUsd'),
    deadlineAt: now + pick('deadlineSeconds') * 1000,
  };
}

export function costOf(price: Price, inputTokens: number, outputTokens: number): number {
  return (inputTokens * price.inputPerMTokUsd + outputTokens * price.outputPerMTokUsd) / 1_000_000;
}

/** Each message's characters in the estimate, kept between model calls (message-memo.ts). */
const messageSizes = new MessageMemo<number>();

/**
 * The characters of a conversation's first messages, known without walking them: a decoded
 * snapshot carries the total its encoder counted (a cold container would otherwise serialize its
 * whole history once more just to estimate). Kept with the very message objects it counted, and
 * used only while the conversation still starts with them.
 */
const knownTotals = new WeakMap<LoggedMessage, { sources: readonly LoggedMessage[]; chars: number }>();

/** What conversationChars(messages) is, counted by whoever built them (the snapshot decoder). */
export function rememberConversationChars(messages: readonly LoggedMessage[], chars: number): void {
  const first = messages[0];
  if (first && Number.isSafeInteger(chars) && chars >= 0) knownTotals.set(first, { sources: messages.slice(), chars });
}

/** The estimate's characters for the messages of a conversation. */
export function conversationChars(messages: readonly LoggedMessage[]): number {
  const known = messages[0] && knownTotals.get(messages[0]);
  let chars = 0;
  let i = 0;
  if (known && startsWith(messages, known.sources)) {
    chars = known.chars;
    i = known.sources.length;
  }
  const sizes = messageSizes.of(messages);
  for (; i < messages.length; i++) chars += sizes.get(i) ?? sizes.set(i, messageChars(messages[i]!));
  return chars;
}

function startsWith(messages: readonly LoggedMessage[], prefix: readonly LoggedMessage[]): boolean {
  if (prefix.length > messages.length) return false;
  for (let i = 0; i < prefix.length; i++) if (messages[i] !== prefix[i]) return false;
  return true;
}

/**
 * A deliberately high estimate of the next request's input tokens (about 3 characters per token
 * plus per-message overhead), so the reservation is an upper bound for common tokenizers.
 */
export function estimateInputTokens(state: RunState): number {
  let chars = bodySize(agentPins(state.started).prompt.text);
  for (const tool of state.started.tools) chars += tool.name.length + tool.description.length + JSON.stringify(tool.inputSchema).length;
  const plan = contextPlan(state);
  chars += plan ? plannedChars(state.messages, plan) : conversationChars(state.messages);
  // Follow-up messages join the conversation at the next model call.
  for (const m of state.pendingMessages) chars += bodySize(m) + attachmentChars(m) + 16;
  return Math.ceil(chars / 3) + 64;
}

/** The estimate's characters for what a context policy keeps of the conversation (prompt.ts sends the same). */
function plannedChars(messages: readonly LoggedMessage[], plan: ContextPlan): number {
  const sizes = messageSizes.of(messages);
  let chars = plan.summary ? bodySize(plan.summary.summary) + summaryPreamble(plan.summary.turns).length + 16 : 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const fate = messageFate(plan, i, m);
    if (fate === 'keep') chars += sizes.get(i) ?? sizes.set(i, messageChars(m));
    else if (fate === 'elide' && m.role === 'tool') chars += messageChars(elidedToolMessage(m, plan.policy.olderToolResults as 'summary' | 'reference'));
  }
  return chars;
}

function messageChars(m: LoggedMessage): number {
  let chars = 16;
  if (m.role === 'user') chars += bodySize(m.content) + attachmentChars(m.content);
  else if (m.role === 'tool') chars += bodySize(m.content) + m.callId.length + 16;
  else {
    if (m.text) chars += bodySize(m.text);
    for (const c of m.calls) chars += bodySize(c.args) + c.name.length + 16;
  }
  return chars;
}

export const MIN_USEFUL_OUTPUT_TOKENS = 256;

export type BudgetCheck =
  | { ok: true; maxOutputTokens: number; reserved: { inputTokens: number; outputTokens: number; costUsd: number } }
  | { ok: false; code: string; message: string };

/** Whether one more model call fits every budget, and what it reserves if it does. */
export function checkModelBudget(state: RunState, now: number): BudgetCheck {
  const { model } = agentPins(state.started);
  return checkCallBudget(state, now, {
    maxOutputTokens: model.maxOutputTokens,
    price: model.price,
    estimate: () => estimateInputTokens(state),
  });
}

/**
 * Whether the context summary that is due (context policy) fits every budget, and what it
 * reserves: a model call like any other (a step, its input estimated high, its output capped).
 */
export function checkSummaryBudget(state: RunState, now: number): (BudgetCheck & { turns: number }) | undefined {
  const summarize = state.started.context?.summarize;
  const due = summaryDue(state);
  if (!summarize || !due) return undefined;
  const check = checkCallBudget(state, now, {
    maxOutputTokens: summarize.maxOutputTokens,
    price: summarize.price,
    estimate: () => estimateSummaryTokens(state, due),
  });
  return { ...check, turns: due.turns };
}

function checkCallBudget(state: RunState, now: number, call: { maxOutputTokens: number; price: Price; estimate: () => number }): BudgetCheck {
  const b = state.started.budgets;
  const u = state.usage;
  if (now >= b.deadlineAt) {
    return { ok: false, code: 'budget_exceeded:deadline', message: `deadline ${new Date(b.deadlineAt).toISOString()} passed` };
  }
  if (u.steps + 1 > b.maxSteps) {
    return { ok: false, code: 'budget_exceeded:steps', message: `${u.steps} of ${plural(b.maxSteps, 'model call')} used` };
  }
  const maxOut = Math.min(call.maxOutputTokens, b.maxOutputTokens - u.outputTokens);
  // Clamp the request to what is left, but a call with almost no room to answer is not worth making.
  if (maxOut < Math.min(MIN_USEFUL_OUTPUT_TOKENS, call.maxOutputTokens)) {
    return { ok: false, code: 'budget_exceeded:output_tokens', message: `${u.outputTokens} of ${plural(b.maxOutputTokens, 'output token')} used` };
  }
  const estIn = call.estimate();
  if (u.inputTokens + estIn > b.maxInputTokens) {
    return {
      ok: false,
      code: 'budget_exceeded:input_tokens',
      message: `${u.inputTokens} used + ~${estIn} needed exceeds ${plural(b.maxInputTokens, 'input token')}`,
    };
  }
  const cost = costOf(call.price, estIn, maxOut);
  if (u.costUsd + cost > b.maxCostUsd) {
    return {
      ok: false,
      code: 'budget_exceeded:cost',
      message: `$${u.costUsd.toFixed(4)} used + up to $${cost.toFixed(4)} exceeds $${b.maxCostUsd}`,
    };
  }
  return { ok: true, maxOutputTokens: maxOut, reserved: { inputTokens: estIn, outputTokens: maxOut, costUsd: cost } };
}
