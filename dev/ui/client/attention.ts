import type { ActionLog } from './action-log.js';
import { allowedActions } from './allowed-actions.js';
import { cancel, errorText, resolve, type ResolveBody } from './api.js';
import { h } from './dom.js';
import { pretty, relative, when } from './format.js';
import type { RunModel } from './run-model.js';
import type { Attention, RunView } from './types.js';

interface Card {
  el: HTMLElement;
  /** Called every second and on every new view: the rerun button waits for its time. */
  update(now: number): void;
}

/** What sending an action will do, said before it is sent. */
function effect(outcome: string, call: string, policy: string, withResult: boolean, op = false): string {
  // A workflow's step (call id op-<n>): its code gets the result, as its ctx.step's return or throw.
  const tool = op ? 'step' : 'tool';
  switch (outcome) {
    case 'succeeded':
      return `Records ${call} as succeeded${withResult ? ' with the result shown below' : ', with no result'}. The ${tool} is not run again; ${op ? "the workflow's code gets this result" : 'the model sees this result'} and the run continues.`;
    case 'failed':
      return `Records ${call} as failed${withResult ? ' with the detail shown below' : ''}. The ${tool} is not run again; ${op ? "the workflow's code gets an error (its ctx.step throws)" : 'the model sees an error result and decides what to do next'}.`;
    case 'rerun':
      return `Runs ${call} again, as a new attempt. Choose this only if you know the first attempt had no effect: its policy is ${policy} because running it twice may not be safe.`;
    case 'retry':
      return 'Clears the park and lets the run continue from the end of its log. Budgets are not reset.';
    case 'fail':
      return 'Ends the run as failed. This cannot be undone.';
    default:
      return 'Asks the run to stop: no new calls; rerun and idempotency-key calls in flight are aborted; verify and escalate calls run to their timeout. The run ends cancelled.';
  }
}

/**
 * The open attention of a run with exactly the actions the API allows: a call outcome (succeeded,
 * failed, or rerun once its deadline and grace have passed) for a call, retry or fail for a
 * run-level park, and cancel. Each action says what it will do and waits for a confirmation.
 */
export class AttentionPanel {
  private readonly section = h('section', { 'aria-labelledby': 'attention-title', class: 'attention', hidden: true });
  private readonly cancelSlot = h('div');
  /** The open attention, then the cancel form while the run can still be cancelled. */
  readonly el = h('div', {}, this.section, this.cancelSlot);
  private readonly cards = new Map<string, Card>();
  private readonly list = h('div');
  private cancelCard: Card | undefined;

  constructor(
    private readonly runId: string,
    private readonly model: RunModel,
    private readonly log: ActionLog,
  ) {
    this.section.append(h('h2', { id: 'attention-title' }, 'Needs a person'), this.list);
  }

  /** Reconcile with the latest view: cards stay (with what was typed) while their attention is open. */
  render(view: RunView, now: number): void {
    const allowed = allowedActions(view);
    const wanted = new Map<string, () => Card>();
    for (const a of allowed.attention) wanted.set(`a-${a.seq}`, () => (a.callId ? this.callCard(a, a.callId) : this.parkCard(a.reason, a.detail)));
    const park = allowed.park;
    if (park) wanted.set('park', () => this.parkCard(park.reason, park.detail));
    if (allowed.unresolved.length > 0) wanted.set('unresolved', () => this.unresolvedCard(allowed.unresolved));
    for (const [key, card] of this.cards) {
      if (!wanted.has(key)) {
        card.el.remove();
        this.cards.delete(key);
      }
    }
    for (const [key, make] of wanted) {
      if (this.cards.has(key)) continue;
      const card = make();
      this.cards.set(key, card);
      this.list.append(card.el);
    }
    if (allowed.cancel && !this.cancelCard) {
      this.cancelCard = this.cancelForm();
      this.cancelSlot.append(this.cancelCard.el);
    } else if (!allowed.cancel && this.cancelCard) {
      this.cancelCard.el.remove();
      this.cancelCard = undefined;
    }
    this.section.hidden = this.cards.size === 0;
    this.tick(now);
  }

  /** A cancelled run's calls with no known outcome: nothing answers them now, a person checks. */
  private unresolvedCard(callIds: string[]): Card {
    const names = callIds.map((id) => `${this.model.calls.get(id)?.name ?? 'call'} (${id})`).join(', ');
    const el = h(
      'article',
      { class: 'card' },
      h('h3', {}, 'Unresolved when the run was cancelled'),
      h('p', {}, `${names}: started with no known outcome. Look at the downstream system to learn whether each took effect; the run has ended and takes no resolution.`),
    );
    return { el, update: () => undefined };
  }

  tick(now: number): void {
    for (const card of this.cards.values()) card.update(now);
  }

  /** An action button that first shows what it will do, then sends on "Send". */
  private confirmable(label: string, describe: () => { text: string; preview?: string } | undefined, send: () => Promise<{ inboxId: string }>, what: string) {
    const box = h('div', { class: 'confirm', role: 'group', 'aria-label': `confirm: ${label}`, hidden: true });
    const button = h('button', { type: 'button' }, `${label}…`);
    button.addEventListener('click', () => {
      const plan = describe();
      if (!plan) return;
      const sendButton = h('button', { type: 'button', class: 'danger' }, `Send: ${label}`);
      const back = h('button', { type: 'button', class: 'secondary' }, 'Back');
      box.replaceChildren(h('p', {}, plan.text), plan.preview === undefined ? '' : h('pre', { class: 'json' }, plan.preview), sendButton, back);
      box.hidden = false;
      back.addEventListener('click', () => {
        box.hidden = true;
        button.focus();
      });
      sendButton.addEventListener('click', async () => {
        sendButton.disabled = true;
        try {
          const { inboxId } = await send();
          box.replaceChildren(h('p', { class: 'ok' }, `Sent (inbox ${inboxId}). The outcome appears below when the worker records it.`));
          this.log.sent(inboxId, what, this.model);
        } catch (error) {
          box.replaceChildren(h('p', { class: 'error', role: 'alert' }, `Refused: ${errorText(error)}`), back);
          this.log.refused(what, errorText(error));
        }
      });
      sendButton.focus();
    });
    return { button, box };
  }

  private callCard(a: Attention, callId: string): Card {
    const call = this.model.calls.get(callId);
    const name = call?.name ?? 'the tool';
    const policy = call?.policy ?? 'escalate';
    const label = `${name} (${callId})`;
    const fieldId = `result-${a.seq}`;
    const errorId = `result-error-${a.seq}`;
    const field = h('textarea', { id: fieldId, rows: 4, spellcheck: 'false', 'aria-describedby': `${fieldId}-hint ${errorId}`, placeholder: '{"refundId": "r_123"}' });
    const error = h('p', { id: errorId, class: 'error', role: 'alert' });
    /** The result field as JSON, or an inline error and nothing sent. */
    const result = (): { ok: true; value?: unknown } | { ok: false } => {
      const text = field.value.trim();
      error.textContent = '';
      field.removeAttribute('aria-invalid');
      if (text === '') return { ok: true };
      try {
        return { ok: true, value: JSON.parse(text) as unknown };
      } catch (e) {
        error.textContent = `The result must be JSON (${(e as Error).message}). Quote a string: "done". Nothing was sent.`;
        field.setAttribute('aria-invalid', 'true');
        field.focus();
        return { ok: false };
      }
    };
    const outcomeAction = (outcome: 'succeeded' | 'failed' | 'rerun', buttonLabel: string) => {
      let body: ResolveBody = { callId, outcome };
      return this.confirmable(
        buttonLabel,
        () => {
          if (outcome === 'rerun') {
            body = { callId, outcome };
            return { text: effect(outcome, label, policy, false, call?.op !== undefined) };
          }
          const r = result();
          if (!r.ok) return undefined;
          body = { callId, outcome, ...(r.value !== undefined ? { result: r.value } : {}) };
          return { text: effect(outcome, label, policy, r.value !== undefined, call?.op !== undefined), ...(r.value !== undefined ? { preview: pretty(r.value) } : {}) };
        },
        () => resolve(this.runId, body),
        `Resolve ${label} as ${outcome}`,
      );
    };
    const succeeded = outcomeAction('succeeded', 'Mark succeeded');
    const failed = outcomeAction('failed', 'Mark failed');
    const rerun = outcomeAction('rerun', 'Rerun');
    const rerunWhy = h('p', { class: 'muted', id: `rerun-why-${a.seq}` });
    rerun.button.setAttribute('aria-describedby', rerunWhy.id);
    const notBefore = a.rerunNotBefore ? Date.parse(a.rerunNotBefore) : undefined;
    const el = h(
      'article',
      { class: 'card', 'aria-labelledby': `attention-${a.seq}` },
      h('h3', { id: `attention-${a.seq}` }, `${label}: ${a.reason.replace(/_/g, ' ')}`),
      h('p', {}, a.detail),
      h('p', { class: 'muted' }, `Policy ${policy}. Attention raised at seq ${a.seq}. Look at the downstream system to learn whether the call took effect, then answer.`),
      h('label', { for: fieldId }, 'Result (JSON), what the call returned or the error detail'),
      h('p', { id: `${fieldId}-hint`, class: 'muted' }, 'Optional. Checked in this page before anything is sent.'),
      field,
      error,
      h('div', { class: 'buttons' }, succeeded.button, failed.button, rerun.button),
      rerunWhy,
      succeeded.box,
      failed.box,
      rerun.box,
    );
    return {
      el,
      update: (now) => {
        const early = notBefore !== undefined && now < notBefore;
        rerun.button.disabled = early;
        rerunWhy.textContent = early
          ? `Rerun is possible ${relative(notBefore, now)} (from ${when(notBefore, now)}): until the call's deadline plus grace has passed, its first attempt may still be running.`
          : 'Rerun is possible now: the call is past its deadline plus grace.';
      },
    };
  }

  private parkCard(reason: string, detail: string): Card {
    const retry = this.confirmable('Retry', () => ({ text: effect('retry', '', '', false) }), () => resolve(this.runId, { action: 'retry' }), 'Retry the run');
    const fail = this.confirmable('Fail the run', () => ({ text: effect('fail', '', '', false) }), () => resolve(this.runId, { action: 'fail' }), 'Fail the run');
    const el = h(
      'article',
      { class: 'card' },
      h('h3', {}, `Run parked: ${reason.replace(/_/g, ' ')}`),
      h('p', {}, detail),
      h('div', { class: 'buttons' }, retry.button, fail.button),
      retry.box,
      fail.box,
    );
    return { el, update: () => undefined };
  }

  private cancelForm(): Card {
    const reason = h('input', { id: 'cancel-reason', type: 'text', maxlength: 500, autocomplete: 'off', 'aria-describedby': 'cancel-error' });
    const error = h('p', { id: 'cancel-error', class: 'error', role: 'alert' });
    const action = this.confirmable(
      'Cancel the run',
      () => {
        error.textContent = '';
        if (reason.value.length > 500) {
          error.textContent = 'A reason is at most 500 characters. Nothing was sent.';
          return undefined;
        }
        return { text: effect('cancel', '', '', false) };
      },
      () => cancel(this.runId, reason.value.trim() || undefined),
      'Cancel the run',
    );
    const el = h(
      'section',
      { class: 'cancel', 'aria-labelledby': 'cancel-title' },
      h('h2', { id: 'cancel-title' }, 'Cancel'),
      h('label', { for: 'cancel-reason' }, 'Reason (optional)'),
      reason,
      error,
      h('div', { class: 'buttons' }, action.button),
      action.box,
    );
    return { el, update: () => undefined };
  }
}
