import { h } from './dom.js';
import { when } from './format.js';
import type { RunModel } from './run-model.js';

interface Entry {
  inboxId: string;
  what: string;
  item: HTMLLIElement;
  done: boolean;
}

/**
 * What this page has sent and what became of it. A request the API accepted is only an inbox item;
 * the entry says "recorded" once the worker holding the run's lease has turned it into an event,
 * which the page sees on the live log, without a reload.
 */
export class ActionLog {
  readonly el: HTMLElement;
  private readonly list = h('ul', { class: 'action-log' });
  private readonly entries: Entry[] = [];

  constructor() {
    this.el = h(
      'section',
      { 'aria-labelledby': 'actions-title', hidden: true },
      h('h2', { id: 'actions-title' }, 'Your actions'),
      // Polite: the outcome is read out when it lands, without taking the focus.
      h('div', { 'aria-live': 'polite' }, this.list),
    );
  }

  sent(inboxId: string, what: string, model: RunModel): void {
    const item = h('li', { class: 'sent' });
    const entry = { inboxId, what, item, done: false };
    this.entries.push(entry);
    this.el.hidden = false;
    this.list.append(item);
    this.show(entry, `${what}: accepted (inbox ${inboxId}). Waiting for the worker to record it…`);
    this.update(model);
  }

  refused(what: string, message: string): void {
    this.el.hidden = false;
    this.list.append(h('li', { class: 'refused' }, `${what}: refused. ${message}`));
  }

  /** Mark the entries whose inbox item the log now shows as ingested. */
  update(model: RunModel): void {
    for (const entry of this.entries) {
      if (entry.done) continue;
      const event = model.ingested.get(entry.inboxId);
      if (event) {
        entry.done = true;
        entry.item.className = 'recorded';
        const outcome = typeof event.outcome === 'string' ? ` ${event.outcome}` : '';
        this.show(entry, `${entry.what}: recorded by the worker at seq ${event.seq} (${event.type}${outcome}, ${when(event.at)}).`);
      } else if (model.terminal) {
        entry.done = true;
        entry.item.className = 'refused';
        this.show(entry, `${entry.what}: the run ended (${model.terminal.type}) before it was recorded; another answer came first.`);
      }
    }
  }

  private show(entry: Entry, text: string): void {
    entry.item.textContent = text;
  }
}
