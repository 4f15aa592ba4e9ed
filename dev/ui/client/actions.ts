import type { ActionLog } from './action-log.js';
import { allowedActions } from './allowed-actions.js';
import { approve, errorText, events, fork, message, signal, type Accepted } from './api.js';
import { h } from './dom.js';
import { forkPoints, type ForkPoint } from './fork-points.js';
import { pretty } from './format.js';
import { ActionForm, JsonField, SchemaForm, newRequestId } from './forms.js';
import type { RunModel } from './run-model.js';
import type { JsonSchema } from './json-schema.js';
import { isBody, type LogEvent, type RunView, type Wait } from './types.js';

interface PinnedTool {
  name: string;
  inputSchema?: JsonSchema;
  wait?: { kind: string; signal?: string; payloadSchema?: JsonSchema };
}

interface Card {
  el: HTMLElement;
}

/**
 * What a person can do to a run besides resolving a park and cancelling (attention.ts): approve,
 * reject or edit a call that awaits approval (its arguments shown, an edit checked against the
 * tool's pinned schema before it is sent), send a signal a call waits for (a form made from the
 * signal's pinned payload schema), send a follow-up message, and fork the run at a turn boundary.
 * Each sends through the same API as any client; the schemas come from the run's own run_started.
 */
export class ActionsPanel {
  readonly el: HTMLElement;
  private readonly waitsList = h('div');
  private readonly waitsSection = h(
    'section',
    { class: 'attention', 'aria-labelledby': 'waits-title', hidden: true },
    h('h2', { id: 'waits-title' }, 'Waiting for you'),
    this.waitsList,
  );
  private readonly cards = new Map<string, Card>();
  private tools: Promise<PinnedTool[]> | undefined;
  private messageCard: Card | undefined;
  private forkCard: Card | undefined;
  private readonly more = h('div', { class: 'more-actions' });

  constructor(
    private readonly runId: string,
    private readonly model: RunModel,
    private readonly log: ActionLog,
  ) {
    this.el = h('div', { class: 'actions' }, this.waitsSection, this.more);
  }

  /** The run's pinned tools, from run_started (read once). */
  private pinnedTools(): Promise<PinnedTool[]> {
    this.tools ??= events(this.runId, 0, { limit: 1 })
      .then((page) => (page.events[0]?.tools as PinnedTool[] | undefined) ?? [])
      .catch(() => {
        this.tools = undefined;
        return [];
      });
    return this.tools;
  }

  /** Reconcile with the latest view: a card stays (with what was typed) while its wait is open. */
  render(view: RunView): void {
    const allowed = allowedActions(view);
    const wanted = new Map<string, Wait>();
    for (const w of [...allowed.approvals, ...allowed.signals]) wanted.set(`${w.kind}-${w.callId}`, w);
    for (const [key, card] of this.cards) {
      if (!wanted.has(key)) {
        card.el.remove();
        this.cards.delete(key);
      }
    }
    for (const [key, w] of wanted) {
      if (this.cards.has(key)) continue;
      const card = w.kind === 'approval' ? this.approvalCard(w) : this.signalCard(w);
      this.cards.set(key, card);
      this.waitsList.append(card.el);
    }
    this.waitsSection.hidden = this.cards.size === 0;

    // Follow-ups go to completed runs and to active ones (for their next model call).
    const messages = allowed.message;
    if (messages && !this.messageCard) {
      this.messageCard = this.messageForm();
      this.more.prepend(this.messageCard.el);
    } else if (!messages && this.messageCard) {
      this.messageCard.el.remove();
      this.messageCard = undefined;
    }
    if (allowed.fork && !this.forkCard) {
      this.forkCard = this.forkForm();
      this.more.append(this.forkCard.el);
    }
  }

  private sent(what: string, accepted: Accepted): void {
    this.log.sent(accepted.inboxId, what, this.model);
  }

  /** A workflow operation's wait, from its op_started (the run model holds it). */
  private opWait(callId: string) {
    return this.model.calls.get(callId)?.op?.wait;
  }

  private approvalCard(wait: Wait): Card {
    // A workflow's approval: the arguments asked about are in its op_started, not the head.
    const opArgs = this.opWait(wait.callId)?.args;
    const w: Wait = wait.args === undefined && isBody(opArgs) && opArgs.kind === 'inline' ? { ...wait, args: opArgs.value } : wait;
    const label = `${w.tool} (${w.callId})`;
    const id = `approval-${w.callId}`;
    const comment = h('textarea', { id: `${id}-comment`, rows: 2, maxlength: 2000, spellcheck: 'true' });
    const edited = new JsonField(`${id}-args`, 'Edited arguments (JSON)', w.args === undefined ? '' : pretty(w.args), 8);
    const editor = h(
      'div',
      { class: 'editor', hidden: true },
      edited.el,
      h('p', { class: 'muted' }, `Checked against ${w.tool}'s pinned schema in this page before anything is sent; the API checks it again.`),
    );
    const what = (d: string) => `${d[0]?.toUpperCase()}${d.slice(1)} ${label}`;
    const send = (decision: 'approve' | 'reject' | 'edit', args?: Record<string, unknown>) => () =>
      approve(this.runId, {
        callId: w.callId,
        decision,
        ...(w.argsHash ? { argsHash: w.argsHash } : {}),
        ...(args ? { args } : {}),
        ...(comment.value.trim() ? { comment: comment.value.trim() } : {}),
      });
    const approveAction = new ActionForm(
      `Approve`,
      () => ({ text: `Runs ${label} with the arguments shown. The first decision wins; this cannot be undone.` }),
      send('approve'),
      (a) => this.sent(what('approve'), a),
    );
    const rejectAction = new ActionForm(
      'Reject',
      () => ({ text: `${label} does not run. The model sees an error result${comment.value.trim() ? ' with your comment' : ''} and decides what to do next.` }),
      send('reject'),
      (a) => this.sent(what('reject'), a),
    );
    let args: Record<string, unknown> | undefined;
    const editAction = new ActionForm(
      'Edit and approve',
      () => {
        if (editor.hidden) {
          editor.hidden = false;
          edited.focus();
          return undefined;
        }
        const schema = this.schemaOf(w.tool) ?? (this.opWait(w.callId)?.argsSchema as JsonSchema | undefined);
        const value = edited.read(schema);
        if (!value.ok) return undefined;
        if (typeof value.value !== 'object' || value.value === null || Array.isArray(value.value)) {
          edited.fail([{ path: '', message: 'the arguments are a JSON object' }]);
          return undefined;
        }
        args = value.value as Record<string, unknown>;
        return { text: `Runs ${label} with these arguments instead of the model's:`, preview: pretty(args) };
      },
      () => send('edit', args)(),
      (a) => this.sent(what('edit'), a),
    );
    const el = h(
      'article',
      { class: 'card', 'aria-labelledby': `${id}-title` },
      h('h3', { id: `${id}-title` }, `${label} awaits approval`),
      h('p', {}, `Requested at seq ${w.seq}${w.until ? `; rejected automatically at ${w.until} if nobody decides` : ''}. The arguments the model gave:`),
      h('pre', { class: 'json args' }, w.args === undefined ? '(not shown)' : pretty(w.args)),
      h('label', { for: comment.id }, 'Comment (optional; kept in the log, and what the model sees on a rejection)'),
      comment,
      editor,
      h('div', { class: 'buttons' }, approveAction.button, rejectAction.button, editAction.button),
      approveAction.box,
      rejectAction.box,
      editAction.box,
    );
    // Read the schema now so the edit is checked without waiting when it is sent.
    void this.pinnedTools().then((tools) => (this.toolList = tools));
    return { el };
  }

  private toolList: PinnedTool[] = [];

  private schemaOf(tool: string): JsonSchema | undefined {
    return this.toolList.find((t) => t.name === tool)?.inputSchema;
  }

  private signalCard(w: Wait): Card {
    const id = `signal-${w.callId}`;
    const name = w.signal ?? '';
    const holder = h('div', {}, h('p', { class: 'muted' }, 'Reading the signal’s schema…'));
    let form: SchemaForm | undefined;
    let payload: unknown;
    const action = new ActionForm(
      `Send ${name}`,
      () => {
        if (!form) return undefined;
        const value = form.read();
        if (!value.ok) return undefined;
        payload = value.value;
        return { text: `Completes ${w.tool} (${w.callId}) with this payload as its result; the run continues.`, preview: pretty(payload) };
      },
      () => signal(this.runId, { signal: name, payload }),
      (a) => this.sent(`Signal ${name} to ${w.tool} (${w.callId})`, a),
    );
    void this.pinnedTools().then((tools) => {
      this.toolList = tools;
      // An agent's signal tool pins its schema in run_started; a workflow's signal op in its op_started.
      const schema = tools.find((t) => t.name === w.tool)?.wait?.payloadSchema ?? (this.opWait(w.callId)?.payloadSchema as JsonSchema | undefined) ?? {};
      form = new SchemaForm(id, schema);
      holder.replaceChildren(form.el);
    });
    const el = h(
      'article',
      { class: 'card', 'aria-labelledby': `${id}-title` },
      h('h3', { id: `${id}-title` }, `${w.tool} (${w.callId}) waits for signal ${name}`),
      h(
        'p',
        {},
        `Since seq ${w.seq}${w.until ? `; times out at ${w.until}` : ''}. The payload is checked against the signal’s pinned schema before it is sent.`,
      ),
      holder,
      h('div', { class: 'buttons' }, action.button),
      action.box,
    );
    return { el };
  }

  private messageForm(): Card {
    const field = h('textarea', { id: 'message-input', rows: 3, spellcheck: 'true', 'aria-describedby': 'message-hint message-error' });
    const error = h('p', { id: 'message-error', class: 'error', role: 'alert' });
    // One id per message composed: a repeat of the same send (a double click, a retry after a lost
    // answer) is delivered once. A new id only after it was accepted.
    let messageId = newRequestId('msg');
    const button = h('button', { type: 'button' }, 'Send message');
    const status = h('p', { class: 'muted', 'aria-live': 'polite' });
    let inFlight = false;
    button.addEventListener('click', async () => {
      if (inFlight) return;
      const text = field.value.trim();
      error.textContent = '';
      if (!text) {
        error.textContent = 'Write the message first. Nothing was sent.';
        field.focus();
        return;
      }
      inFlight = true;
      button.disabled = true;
      status.textContent = 'Sending…';
      try {
        const accepted = await message(this.runId, { input: text, messageId });
        status.textContent = `Sent (inbox ${accepted.inboxId}): the run answers it on its next model call.`;
        this.sent('Message', accepted);
        field.value = '';
        messageId = newRequestId('msg');
      } catch (e) {
        status.textContent = '';
        error.textContent = `Refused: ${errorText(e)}`;
        this.log.refused('Message', errorText(e));
      } finally {
        inFlight = false;
        button.disabled = false;
      }
    });
    const el = h(
      'section',
      { class: 'card message', 'aria-labelledby': 'message-title' },
      h('h2', { id: 'message-title' }, 'Follow-up message'),
      h('label', { for: 'message-input' }, 'Message'),
      h('p', { id: 'message-hint', class: 'muted' }, 'Continues a completed run, or joins an active run at its next model call.'),
      field,
      error,
      h('div', { class: 'buttons' }, button),
      status,
    );
    return { el };
  }

  private forkForm(): Card {
    const select = h('select', { id: 'fork-at', 'aria-describedby': 'fork-why' });
    const why = h('p', { id: 'fork-why', class: 'muted' });
    const input = h('textarea', { id: 'fork-input', rows: 2, spellcheck: 'true' });
    const load = h('button', { type: 'button', class: 'secondary' }, 'Show the turn boundaries');
    const body = h('div', { hidden: true });
    let points: ForkPoint[] = [];
    // The fork's id, made when the form opens: sending twice makes the same fork (200), never two.
    let forkId = newRequestId('fork');
    const describe = () => {
      const point = points.find((p) => String(p.seq) === select.value);
      why.textContent = point ? (point.ok ? `Forks from ${point.label}.` : `Not a turn boundary: ${point.reason ?? ''}.`) : '';
    };
    select.addEventListener('change', describe);
    load.addEventListener('click', async () => {
      load.disabled = true;
      try {
        points = forkPoints(await allEvents(this.runId));
        select.replaceChildren(
          ...points.map((p) =>
            h(
              'option',
              { value: String(p.seq), disabled: !p.ok },
              p.ok ? `seq ${p.seq} (${p.type}): ${p.label}` : `seq ${p.seq} (${p.type}): not a boundary, ${p.reason ?? ''}`,
            ),
          ),
        );
        const last = [...points].reverse().find((p) => p.ok);
        if (last) select.value = String(last.seq);
        describe();
        body.hidden = false;
        load.textContent = 'Read the log again';
        forkId = newRequestId('fork');
      } catch (e) {
        why.textContent = `Could not read the log: ${errorText(e)}`;
      } finally {
        load.disabled = false;
      }
    });
    let created: { runId: string } | undefined;
    const action = new ActionForm(
      'Fork',
      () => {
        const point = points.find((p) => String(p.seq) === select.value);
        if (!point?.ok) {
          why.textContent = 'Choose a turn boundary first. Nothing was sent.';
          return undefined;
        }
        const replaced = input.value.trim();
        return {
          text: `Creates run ${forkId}: this run's log up to seq ${point.seq}, then it continues on its own${replaced ? ' with your input in place of the last user message' : ''}. This run is not changed. The page then opens the fork.`,
        };
      },
      async () => {
        const replaced = input.value.trim();
        const out = await fork(this.runId, { atSeq: Number(select.value), runId: forkId, ...(replaced ? { input: replaced } : {}) });
        created = out;
        return { inboxId: `fork ${out.runId} ${out.created ? 'created' : 'exists'}` };
      },
      () => {
        if (created) location.assign(`/ui/runs/${encodeURIComponent(created.runId)}`);
      },
    );
    body.append(
      h('label', { for: 'fork-at' }, 'Fork after'),
      select,
      why,
      h('label', { for: 'fork-input' }, 'New input (optional; replaces the last user message)'),
      input,
      h('div', { class: 'buttons' }, action.button),
      action.box,
    );
    const el = h(
      'section',
      { class: 'card fork', 'aria-labelledby': 'fork-title' },
      h('h2', { id: 'fork-title' }, 'Fork'),
      h('p', { class: 'muted' }, 'A new run from a turn boundary of this one: nothing before it runs again.'),
      h('div', { class: 'buttons' }, load),
      body,
    );
    return { el };
  }
}

async function allEvents(runId: string): Promise<LogEvent[]> {
  const all: LogEvent[] = [];
  let after = 0;
  for (;;) {
    const page = await events(runId, after);
    all.push(...page.events);
    if (page.next === undefined) return all;
    after = page.next;
  }
}
