import { h } from './dom.js';
import { duration, plural, truncate, usd, when } from './format.js';
import { bodiesOf, bodyView, rawEventView } from './payload.js';
import { facts, foldEvent, type RunModel } from './run-model.js';
import type { LogEvent } from './types.js';

const COLUMNS = ['seq', 'time (since previous)', 'event', 'tool call (policy, attempt, not after)', 'tokens, cost', 'result', 'details'];

/** One line saying what an event means (the CLI's `runs events` says the same). */
export function describe(e: LogEvent): string {
  const s = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));
  switch (e.type) {
    case 'run_started': {
      const agent = e.agent as { name?: string; version?: string } | undefined;
      if (e.workflow !== undefined) return `workflow ${s(agent?.name)}@${s(agent?.version)}`;
      return `${s(agent?.name)}@${s(agent?.version)} on ${s((e.model as { id?: string } | undefined)?.id)}`;
    }
    case 'model_started':
      return `step ${s(e.step)}`;
    case 'model_response': {
      const calls = (e.calls as { callId?: string; name?: string }[] | undefined) ?? [];
      return calls.length > 0 ? `asks for ${calls.map((c) => `${s(c.name)} (${s(c.callId)})`).join(', ')}` : `answers (${s(e.stopReason)})`;
    }
    case 'model_failed':
      return `${s(e.code)}: ${truncate(s(e.message), 120)}${e.retryable ? ' (retryable)' : ''}`;
    case 'tool_result': {
      const reservation = e.reservation as { step?: number } | undefined;
      return `${e.ok ? 'ok' : `error ${s(e.errorCode)}`} from ${s(e.source)}${reservation ? `; reserves step ${s(reservation.step)}` : ''}`;
    }
    case 'tool_verified':
      return `verify(): ${s(e.status)}`;
    case 'op_started': {
      const wait = e.wait as { kind?: string; signal?: string; runId?: string; definition?: { kind?: string; name?: string } } | undefined;
      const what = `${s(e.kind)} ${s(e.name)} (op-${s(e.op)})`;
      if (!wait) return `${what} starts, attempt ${s(e.attempt)}${e.policy ? ` (${s(e.policy)})` : ''}`;
      if (wait.kind === 'signal') return `${what} waits for signal ${s(wait.signal)}`;
      if (wait.kind === 'child') return `${what} starts child run ${s(wait.runId)} (${s(wait.definition?.kind)} ${s(wait.definition?.name)})`;
      if (wait.kind === 'approval') return `${what} awaits approval`;
      return `${what} waits for a timer`;
    }
    case 'op_result':
      return `${s(e.kind)} ${s(e.name)} (op-${s(e.op)}): ${e.ok ? 'ok' : `error ${s(e.errorCode)}`} from ${s(e.source)}${e.sentBy ? ` by ${s(e.sentBy)}` : ''}`;
    case 'op_retry': {
      const error = (e.error as { code?: string; message?: string } | undefined) ?? {};
      return `${s(e.name)} (op-${s(e.op)}) attempt ${s(e.attempt)} threw ${s(error.code)}: ${truncate(s(error.message), 120)}; retries at ${when(typeof e.retryAt === 'number' ? e.retryAt : 0)}`;
    }
    case 'op_verified':
      return `${s(e.name)} (op-${s(e.op)}) verify(): ${s(e.status)}`;
    case 'attention_required':
      return `${s(e.reason)}: ${s(e.detail)}`;
    case 'attention_resolved':
      return `${s(e.outcome)}${e.callId ? ` for ${s(e.callId)}` : ''} by ${s(e.resolvedBy)} (inbox ${s(e.inboxId)})`;
    case 'cancel_requested':
      return `by ${s(e.requestedBy)}${e.reason ? `: ${s(e.reason)}` : ''}`;
    case 'run_failed':
      return `${s(e.code)}: ${s(e.message)}`;
    case 'run_cancelled': {
      const unresolved = (e.unresolved as string[] | undefined) ?? [];
      return unresolved.length > 0 ? `unresolved: ${unresolved.join(', ')}` : 'nothing unresolved';
    }
    default:
      return '';
  }
}

/**
 * Every event of the run, one row each, appended as events arrive (rows already shown are never
 * redrawn, so an expanded payload stays open while the run goes on).
 */
export class Timeline {
  readonly el: HTMLElement;
  private readonly body = h('tbody');
  private readonly count = h('span', { class: 'muted' }, '0 events');

  constructor(
    private readonly runId: string,
    private readonly model: RunModel,
  ) {
    const table = h(
      'table',
      { class: 'timeline' },
      h('caption', { class: 'visually-hidden' }, 'Every event of the run, oldest first'),
      h('thead', {}, h('tr', {}, ...COLUMNS.map((c) => h('th', { scope: 'col' }, c)))),
      this.body,
    );
    this.el = h(
      'section',
      { 'aria-labelledby': 'timeline-title' },
      h('h2', { id: 'timeline-title' }, 'Timeline ', this.count),
      h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'timeline table, scrolls sideways' }, table),
    );
  }

  /** Fold and show new events (the model is folded here, once per event). */
  add(events: LogEvent[]): void {
    for (const e of events) {
      if (e.seq <= this.model.lastSeq) continue;
      foldEvent(this.model, e);
      this.body.append(this.row(e));
    }
    this.count.textContent = plural(this.model.lastSeq, 'event');
  }

  private row(e: LogEvent): HTMLTableRowElement {
    const f = facts(this.model, e);
    const previous = this.model.previousAt.get(e.seq);
    const result = f.ok === undefined ? '' : f.ok ? 'ok' : 'error';
    const call = [f.policy, f.attempt ? `attempt ${f.attempt}` : '', f.notAfter ? `not after ${when(f.notAfter)}` : ''].filter(Boolean).join(' · ');
    const details = h('td', { class: 'details' }, h('span', { class: 'what' }, describe(e)));
    for (const [label, body] of bodiesOf(e)) details.append(bodyView(this.runId, label, body));
    details.append(rawEventView(e));
    return h(
      'tr',
      { id: `seq-${e.seq}`, class: `event type-${e.type.replace(/[^a-z_]/g, '')}` },
      h('td', { class: 'num' }, e.seq),
      h('td', { class: 'time' }, when(e.at), previous === undefined ? '' : h('span', { class: 'sub' }, `+${duration(e.at - previous)}`)),
      h('td', {}, h('code', {}, e.type)),
      h('td', {}, f.tool ?? '', call ? h('span', { class: 'sub' }, call) : ''),
      h('td', {}, f.tokens ?? '', f.costUsd === undefined ? '' : h('span', { class: 'sub' }, usd(f.costUsd))),
      h('td', {}, result ? h('span', { class: `badge ${result}` }, result) : ''),
      details,
    );
  }
}
