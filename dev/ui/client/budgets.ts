import { h } from './dom.js';
import { dateTime, duration, int, usd } from './format.js';
import type { RunView } from './types.js';

function meterRow(label: string, used: number, max: number, text: string): HTMLElement {
  const id = `budget-${label.replace(/\W+/g, '-').toLowerCase()}`;
  const ratio = max > 0 ? used / max : 0;
  return h(
    'div',
    { class: `budget${ratio >= 1 ? ' over' : ratio >= 0.8 ? ' near' : ''}` },
    h('dt', { id }, label),
    h(
      'dd',
      {},
      h('meter', { min: 0, max, value: Math.min(used, max), low: max * 0.6, high: max * 0.8, optimum: 0, 'aria-labelledby': id }),
      h('span', { class: 'budget-text' }, `${text} (${Math.round(ratio * 100)}%)`),
    ),
  );
}

/** Usage against the run's pinned budgets; the deadline as time used of the time allowed. */
export function budgetsView(view: RunView, now: number): HTMLElement {
  const b = view.budgets ?? {};
  const u = view.usage;
  const rows: HTMLElement[] = [];
  if (b.maxSteps) rows.push(meterRow('Steps', u.steps, b.maxSteps, `${u.steps} of ${b.maxSteps}`));
  if (b.maxInputTokens) rows.push(meterRow('Input tokens', u.inputTokens, b.maxInputTokens, `${int(u.inputTokens)} of ${int(b.maxInputTokens)}`));
  if (b.maxOutputTokens) rows.push(meterRow('Output tokens', u.outputTokens, b.maxOutputTokens, `${int(u.outputTokens)} of ${int(b.maxOutputTokens)}`));
  if (b.maxCostUsd) rows.push(meterRow('Cost', u.costUsd, b.maxCostUsd, `${usd(u.costUsd)} of ${usd(b.maxCostUsd)}`));
  if (b.deadlineAt) {
    const created = Date.parse(view.createdAt);
    const finished = ['completed', 'failed', 'cancelled'].includes(view.status);
    const upTo = finished ? Date.parse(view.updatedAt) : now;
    const left = b.deadlineAt - upTo;
    const text = finished
      ? `ended ${duration(Math.max(0, left))} before the deadline ${dateTime(b.deadlineAt)}`
      : left > 0
        ? `deadline in ${duration(left)} (${dateTime(b.deadlineAt)})`
        : `deadline passed ${duration(-left)} ago`;
    rows.push(meterRow('Time', Math.max(0, upTo - created), Math.max(1, b.deadlineAt - created), text));
  }
  return h(
    'section',
    { 'aria-labelledby': 'budgets-title' },
    h('h2', { id: 'budgets-title' }, 'Budgets'),
    rows.length > 0 ? h('dl', { class: 'budgets' }, ...rows) : h('p', { class: 'muted' }, 'No budgets recorded.'),
  );
}
