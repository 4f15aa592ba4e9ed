import { allOperations, errorText } from './api.js';
import { h } from './dom.js';
import { plural } from './format.js';
import { operationRow } from './operation-rows.js';
import type { Operation } from './types.js';

const COLUMNS = ['op', 'kind', 'name', 'status', 'attempts', 'started', 'ended', 'result or error', 'child run'];

/** The operations as a table (text nodes only: a result holding markup stays text). */
export function operationsTable(ops: readonly Operation[]): HTMLElement {
  const rows = ops.map(operationRow);
  return h(
    'table',
    { class: 'operations' },
    h('caption', { class: 'visually-hidden' }, "The workflow's operations, in the order its code asked for them"),
    h('thead', {}, h('tr', {}, ...COLUMNS.map((c) => h('th', { scope: 'col' }, c)))),
    h(
      'tbody',
      {},
      ...rows.map((r) =>
        h(
          'tr',
          { id: `op-row-${r.op}`, class: `op status-${r.status}` },
          h('td', { class: 'num' }, h('code', {}, r.callId)),
          h('td', {}, r.kind),
          h('td', {}, r.name),
          h('td', {}, h('span', { class: `badge ${r.status === 'succeeded' ? 'ok' : r.status === 'failed' ? 'error' : ''}` }, r.status)),
          h('td', { class: 'num' }, r.attempts),
          h('td', { class: 'time' }, r.started),
          h('td', { class: 'time' }, r.ended),
          h('td', { class: 'outcome' }, r.outcome.includes('\n') ? h('pre', { class: 'json' }, r.outcome) : r.outcome),
          h(
            'td',
            {},
            r.child ? h('a', { href: `/ui/runs/${encodeURIComponent(r.child.runId)}`, class: 'child-run' }, r.child.runId) : '',
            r.child ? h('span', { class: 'sub' }, r.child.label) : '',
          ),
        ),
      ),
    ),
  );
}

/**
 * The operations section of a workflow run's page, read from GET /runs/{id}/operations (the run's
 * fold state, as the API acts on it) again whenever the log has grown.
 */
export class OperationsView {
  readonly el: HTMLElement;
  private readonly body = h('div', {}, h('p', { class: 'muted' }, 'Reading the operations…'));
  private readonly count = h('span', { class: 'muted' });
  private readSeq = -1;
  private reading: Promise<void> | undefined;

  constructor(private readonly runId: string) {
    this.el = h(
      'section',
      { 'aria-labelledby': 'operations-title', class: 'operations-section' },
      h('h2', { id: 'operations-title' }, 'Operations ', this.count),
      this.body,
    );
  }

  /** Read them again when the log is past what was last read (one read at a time). */
  refresh(lastSeq: number): void {
    if (lastSeq <= this.readSeq || this.reading) return;
    const seq = lastSeq;
    this.reading = allOperations(this.runId)
      .then((ops) => {
        this.readSeq = seq;
        this.count.textContent = plural(ops.length, 'operation');
        this.body.replaceChildren(
          ops.length === 0
            ? h('p', { class: 'muted' }, 'The workflow has asked for nothing yet.')
            : h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'operations table, scrolls sideways' }, operationsTable(ops)),
        );
      })
      .catch((error: unknown) => {
        this.body.replaceChildren(h('p', { class: 'error', role: 'alert' }, `Could not read the operations: ${errorText(error)}`));
      })
      .finally(() => {
        this.reading = undefined;
      });
  }
}
