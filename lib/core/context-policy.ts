import { bodySize, inline, inlineText } from './body.js';
import type { ContextSummaryState, PinnedContext } from './context-events.js';
import type { LoggedMessage } from './messages.js';
import type { RunState } from './state.js';
import { plural } from './plural.js';

/** What becomes of one message of the conversation in the prompt. */
export type MessageFate = 'keep' | 'elide' | 'drop';

/**
 * Where a run's conversation is cut, derived from folded state alone (so the prompt is the same
 * live, on resume and on replay). Turns are cut only at a model response: a response and the
 * results of its calls are kept, shortened or dropped together, so no tool result ever loses the
 * call it answers (providers reject orphans).
 */
export interface ContextPlan {
  policy: PinnedContext;
  /** Model responses of the conversation so far. */
  turns: number;
  /** Index of the first message kept verbatim (the start of the last keepTurns turns). */
  keepFrom: number;
  /** Index of the first message the summary does not cover (0: there is no summary). */
  coveredTo: number;
  summary?: ContextSummaryState;
}

/** Message indexes where each turn starts (its model response), in order. */
export function turnStarts(messages: readonly LoggedMessage[]): number[] {
  const starts: number[] = [];
  for (let i = 0; i < messages.length; i++) if (messages[i]!.role === 'assistant') starts.push(i);
  return starts;
}

/** The plan of a run that pins a context policy; undefined without one (the whole history goes). */
export function contextPlan(state: RunState): ContextPlan | undefined {
  const policy = state.started.context;
  if (!policy) return undefined;
  const starts = turnStarts(state.messages);
  const turns = starts.length;
  const keepFrom = turns > policy.keepTurns ? starts[turns - policy.keepTurns]! : 1;
  const summary = state.context;
  const coveredTo = summary ? (starts[summary.turns] ?? state.messages.length) : 0;
  return { policy, turns, keepFrom, coveredTo, ...(summary ? { summary } : {}) };
}

export function messageFate(plan: ContextPlan, i: number, m: LoggedMessage): MessageFate {
  // The input and what people sent are never cut; neither are the last turns.
  if (i === 0 || m.role === 'user' || i >= plan.keepFrom) return 'keep';
  if (i < plan.coveredTo) return 'drop';
  if (plan.policy.olderToolResults === 'drop') return 'drop';
  return m.role === 'tool' ? 'elide' : 'keep';
}

/** Bodies kept at full size in an elided result: a short result is its own summary. */
export const ELIDED_TEXT_CHARS = 200;

/**
 * An older tool result as the prompt holds it: the same message (call id, name, error flag) with
 * its content replaced. `summary`: the stored summary of an offloaded result (the payload codec's
 * first 200 characters), or the first 200 characters of an inline one. `reference`: one line
 * naming the stored result. Pure in the body, so live and replay agree.
 */
export function elidedToolMessage(m: Extract<LoggedMessage, { role: 'tool' }>, mode: 'summary' | 'reference'): LoggedMessage {
  return { ...m, content: inline(elidedText(m, mode)) };
}

export function elidedText(m: Extract<LoggedMessage, { role: 'tool' }>, mode: 'summary' | 'reference'): string {
  const body = m.content;
  const size = bodySize(body);
  if (mode === 'reference') {
    const where = body.kind === 'blob' ? `stored as sha256:${body.sha256.slice(0, 16)}` : 'kept in the run log';
    return `[result of ${m.name} (call ${m.callId}) left out of the prompt: ${plural(size, 'character')}, ${where}]`;
  }
  if (body.kind === 'blob') return `${body.summary}… [result shortened: ${size} bytes stored as sha256:${body.sha256.slice(0, 16)}]`;
  const text = inlineText(body);
  return text.length <= ELIDED_TEXT_CHARS ? text : `${text.slice(0, ELIDED_TEXT_CHARS)}… [result shortened from ${plural(text.length, 'character')}]`;
}

/** The user message that stands in for the turns a summary covers. */
export function summaryPreamble(turns: number): string {
  return `Summary of turns 1-${turns} of this conversation (left out of the prompt to keep it short):\n`;
}

/**
 * The turns a summary is due to cover now, or undefined: when the turns older than the last
 * keepTurns that no summary covers yet number everyTurns or more. The new summary covers every
 * older turn (the previous summary is part of its input).
 */
export function summaryDue(state: RunState): { turns: number; from: number; to: number } | undefined {
  const every = state.started.context?.summarize?.everyTurns;
  const plan = every === undefined ? undefined : contextPlan(state);
  if (!plan || every === undefined) return undefined;
  const older = plan.turns - plan.policy.keepTurns;
  const covered = plan.summary?.turns ?? 0;
  if (older - covered < every) return undefined;
  // Messages [from, to): the older turns no summary covers yet (to is where the kept turns start).
  return { turns: older, from: Math.max(plan.coveredTo, 1), to: plan.keepFrom };
}

/** The instructions of a summary call. */
export const SUMMARY_SYSTEM =
  "You keep the running summary of an AI agent's conversation, which replaces its oldest turns in the agent's prompt. " +
  'Merge the summary so far with the turns given: keep facts, identifiers, numbers, decisions, results of tool calls and what is still to do; ' +
  'drop chatter. Answer with the new summary only.';

/** Characters of a summary request besides its transcript lines (instructions, headings). */
const SUMMARY_OVERHEAD = SUMMARY_SYSTEM.length + 64;

/** A deliberately high estimate of a summary call's input tokens, as estimateInputTokens is for a turn. */
export function estimateSummaryTokens(state: RunState, due: { from: number; to: number }): number {
  let chars = SUMMARY_OVERHEAD + (state.context ? bodySize(state.context.summary) : 0);
  for (let i = due.from; i < due.to; i++) chars += transcriptChars(state.messages[i]!);
  return Math.ceil(chars / 3) + 64;
}

function transcriptChars(m: LoggedMessage): number {
  if (m.role === 'user') return bodySize(m.content) + 16;
  if (m.role === 'tool') return bodySize(m.content) + m.name.length + m.callId.length + 32;
  let chars = 16 + (m.text ? bodySize(m.text) : 0);
  for (const c of m.calls) chars += bodySize(c.args) + c.name.length + c.callId.length + 16;
  return chars;
}
