import { attachmentLink } from './attachments.js';
import { blob, errorText } from './api.js';
import { approvalAsked, partialText, type Attachment, type Conversation, type Entry, type ToolEntry, type TurnEntry } from './conversation.js';
import { h, type Child } from './dom.js';
import { bytes, duration, int, pretty, short, usd, when } from './format.js';
import { sha256Hex } from './digest.js';
import type { Body } from './types.js';

/**
 * The conversation, drawn: one list item per entry, in order, each made of slots. A fold says which
 * entries changed; for each, only the slots whose value is a new object are drawn again, so a
 * payload someone opened stays open while the run goes on, and a 500-event run costs one small
 * redraw per event. Every string from the run (model text, tool output, names) is a text node.
 */
type Slot = [key: string, value: unknown, draw: () => Child];

interface Drawn {
  li: HTMLLIElement;
  slots: Map<string, { value: unknown; el: HTMLElement }>;
}

const runLink = (runId: string, text?: string) => h('a', { href: `/ui/runs/${encodeURIComponent(runId)}` }, text ?? runId);

/** A body's bytes from the API, checked against the sha256 the log recorded, as text. */
async function loadBlobText(runId: string, sha256: string): Promise<{ text: string; size: number }> {
  const data = await blob(runId, sha256);
  const actual = await sha256Hex(data);
  if (actual !== sha256) throw new Error(`sha256 mismatch: the log recorded ${short(sha256)}, the bytes hash to ${short(actual)}; not shown`);
  const raw = new TextDecoder().decode(data);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw) as unknown;
  } catch {
    // Stored bodies are JSON; show the text as it is if one is not.
  }
  return { text: pretty(value), size: data.byteLength };
}

/** A value as text: strings as they are, short JSON on one line, longer JSON indented. */
export function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  const line = JSON.stringify(value) ?? String(value);
  return line.length <= COMPACT_CHARS ? line : pretty(value);
}
const COMPACT_CHARS = 100;

/**
 * A payload as text: inline at once; stored in S3 as its summary, loaded through the API (sha256
 * checked) the first time someone opens it.
 */
export function payload(runId: string, label: string, body: Body, options: { prose?: boolean } = {}): HTMLElement {
  if (body.kind === 'inline') {
    const text = asText(body.value);
    const asProse = options.prose === true && typeof body.value === 'string';
    return h(
      'div',
      { class: 'said' },
      label ? h('span', { class: 'label' }, label) : null,
      h(asProse ? 'p' : 'pre', { class: asProse ? 'say' : 'json', tabindex: asProse ? undefined : '0' }, text),
    );
  }
  const out = h('pre', { class: options.prose ? 'say' : 'json', tabindex: '0', hidden: true });
  const status = h('p', { class: 'load-status', role: 'status' });
  const details = h(
    'details',
    { class: 'payload offloaded' },
    h('summary', {}, `${label || 'payload'} `, h('span', { class: 'muted' }, `in S3, ${bytes(body.size)}: open to load it`)),
    h('pre', { class: 'json summary' }, body.summary),
    status,
    out,
  );
  let loading = false;
  details.addEventListener('toggle', () => {
    if (!details.open || loading || !out.hidden) return;
    loading = true;
    status.textContent = 'Loading…';
    status.className = 'load-status';
    loadBlobText(runId, body.sha256)
      .then(({ text, size }) => {
        out.textContent = text;
        out.hidden = false;
        status.textContent = `Loaded ${bytes(size)}, sha256 checked.`;
        status.className = 'load-status ok';
      })
      .catch((error: unknown) => {
        status.textContent = `Could not load it: ${errorText(error)}`;
        status.className = 'load-status error';
      })
      .finally(() => {
        loading = false;
      });
  });
  return details;
}

function attachments(list: Attachment[]): Child {
  return list.length === 0 ? null : h('ul', { class: 'attachments', 'aria-label': 'attachments' }, ...list.map(attachmentLink));
}

function turnSlots(runId: string, t: TurnEntry): Slot[] {
  const title = `Assistant, step ${t.step}${t.attempt > 1 ? ` (attempt ${t.attempt})` : ''}${t.purpose === 'summary' ? ': context summary' : ''}`;
  const a = t.answer;
  const text: Slot = a
    ? ['text', a, () => (a.text ? payload(runId, '', a.text, { prose: true }) : null)]
    : ['text', t.chunks, () => (t.chunks.length > 0 ? h('p', { class: 'say streaming', 'aria-live': 'polite' }, partialText(t)) : null)];
  const status = a
    ? `${int(a.inputTokens)} in / ${int(a.outputTokens)} out ${a.inputTokens + a.outputTokens === 1 ? 'token' : 'tokens'} · ${usd(a.costUsd)}${a.stopReason ? ` · ${a.stopReason}` : ''}`
    : t.state === 'failed'
      ? `failed: ${t.failure?.code ?? '?'}: ${t.failure?.message ?? ''}${t.failure?.retryable ? ' (retryable: tried again)' : ''}`
      : t.state === 'abandoned'
        ? 'abandoned: this attempt was cut off before it answered; its text was dropped'
        : t.state === 'streaming'
          ? 'writing…'
          : 'thinking…';
  return [
    ['head', title, () => h('h3', {}, title, h('span', { class: 'when' }, when(t.at)))],
    text,
    ['status', status, () => h('p', { class: `meta${t.state === 'failed' ? ' error' : ''}${t.state === 'abandoned' ? ' muted' : ''}` }, status)],
    ['output', a?.output, () => (a?.output ? payload(runId, 'Structured output', a.output) : null)],
    [
      'outputError',
      a?.outputError,
      () => (a?.outputError ? h('p', { class: 'meta error' }, `The answer does not fit the output schema (sent back to the model): ${a.outputError}`) : null),
    ],
  ];
}

function toolState(t: ToolEntry): [string, string] {
  if (t.result) return t.result.ok ? ['ok', 'ok'] : ['error', `error${t.result.errorCode ? ` ${t.result.errorCode}` : ''}`];
  if (t.approval && !t.approval.decision) return ['person', 'waits for approval'];
  if (t.wait && t.attempts.length > 0)
    return ['running', t.wait.kind === 'signal' ? `waits for signal ${t.wait.signal}` : t.wait.kind === 'timer' ? 'sleeping' : 'waits for its child run'];
  if (t.attempts.length > 0) return ['running', 'running'];
  return ['running', 'asked for'];
}

function toolSlots(runId: string, t: ToolEntry): Slot[] {
  const [cls, state] = toolState(t);
  const head = `${t.name}|${t.policy ?? ''}|${state}`;
  const runKey = `${t.attempts.length}|${t.wait?.kind ?? ''}|${t.verified ?? ''}`;
  return [
    [
      'head',
      head,
      () =>
        h(
          'h3',
          {},
          'Tool call ',
          h('code', {}, t.name),
          ` (${t.callId})`,
          t.policy ? h('span', { class: 'policy' }, t.policy) : null,
          h('span', { class: `badge ${cls}` }, state),
          h('span', { class: 'when' }, when(t.at)),
        ),
    ],
    [
      'args',
      t.args ?? t.argsError,
      () => (t.args ? payload(runId, 'Arguments', t.args) : t.argsError ? h('p', { class: 'meta error' }, `Arguments not recorded: ${t.argsError}`) : null),
    ],
    ['approval', t.approval, () => approvalView(runId, t)],
    ['run', runKey, () => runView(t)],
    ['result', t.result, () => resultView(runId, t)],
  ];
}

function approvalView(runId: string, t: ToolEntry): Child {
  const a = t.approval;
  if (!a) return null;
  const asked = approvalAsked(a);
  if (!a.decision) return h('div', { class: 'approval open' }, h('p', {}, asked));
  const verb = { approve: 'Approved', reject: 'Rejected', edit: 'Approved with edited arguments', expire: 'Expired (rejected)' }[a.decision] ?? a.decision;
  return h(
    'div',
    { class: `approval decided-${a.decision}` },
    h(
      'p',
      {},
      asked,
      ' ',
      h('strong', {}, verb),
      a.decision === 'expire' ? '' : ` by ${a.decidedBy ?? '?'}`,
      a.decidedAt ? ` at ${when(a.decidedAt)}` : '',
      a.comment ? `: “${a.comment}”` : '.',
    ),
    a.editedArgs ? payload(runId, 'Edited arguments (these ran)', a.editedArgs) : null,
  );
}

function runView(t: ToolEntry): Child {
  if (t.attempts.length === 0 && !t.verified) return null;
  const parts: Child[] = [];
  const last = t.attempts.at(-1);
  if (last)
    parts.push(
      `Started at ${when(last.at)}${t.attempts.length > 1 ? ` (attempt ${last.attempt}; ${t.attempts.length - 1} earlier attempt${t.attempts.length > 2 ? 's' : ''} cut off)` : ''}.`,
    );
  if (t.wait?.kind === 'signal') parts.push(` Waits for signal `, h('code', {}, t.wait.signal), ` until ${when(t.wait.until)}.`);
  if (t.wait?.kind === 'timer') parts.push(` Sleeps until ${when(t.wait.until)}.`);
  if (t.wait?.kind === 'child') parts.push(' Child run: ', runLink(t.wait.runId), '.');
  if (t.verified) parts.push(` verify(): ${t.verified}.`);
  return h('p', { class: 'meta' }, ...parts);
}

function resultView(runId: string, t: ToolEntry): Child {
  const r = t.result;
  if (!r) return null;
  const took = t.attempts.at(-1) ? ` after ${duration(r.at - (t.attempts.at(-1)?.at ?? r.at))}` : '';
  const from =
    r.source === 'signal'
      ? `Signal delivered${r.by ? ` by ${r.by}` : ''}`
      : r.source === 'human'
        ? `Recorded by ${r.by ?? 'a person'}`
        : r.source === 'child'
          ? 'The child run answered'
          : r.source === 'tool'
            ? 'Result'
            : `Result (${r.source})`;
  return h(
    'div',
    { class: `result result-${r.ok ? 'ok' : 'error'}` },
    r.output ? payload(runId, `${from}${took}`, r.output) : h('p', { class: 'meta' }, `${from}${took}.`),
  );
}

function slotsOf(runId: string, e: Entry): Slot[] {
  switch (e.kind) {
    case 'input':
      return [
        ['head', e.agent, () => h('h3', {}, 'Input', h('span', { class: 'muted' }, ` to ${e.agent}`), h('span', { class: 'when' }, when(e.at)))],
        [
          'origin',
          e.seq,
          () =>
            e.parent || e.forkedFrom
              ? h(
                  'p',
                  { class: 'meta' },
                  ...(e.parent ? ['Child run of ', runLink(e.parent.runId), ` (call ${e.parent.callId}). `] : []),
                  ...(e.forkedFrom ? ['A fork of ', runLink(e.forkedFrom.runId), `, copied up to seq ${e.forkedFrom.seq}.`] : []),
                )
              : null,
        ],
        ['input', e.input, () => payload(runId, '', e.input, { prose: true })],
        ['attachments', e.attachments, () => attachments(e.attachments)],
      ];
    case 'turn':
      return turnSlots(runId, e);
    case 'tool':
      return toolSlots(runId, e);
    case 'message':
      return [
        [
          'head',
          e.sentBy,
          () => h('h3', {}, 'Follow-up message', h('span', { class: 'muted' }, ` from ${e.sentBy}`), h('span', { class: 'when' }, when(e.at))),
        ],
        ['input', e.input, () => payload(runId, '', e.input, { prose: true })],
        ['attachments', e.attachments, () => attachments(e.attachments)],
      ];
    case 'attention':
      return [
        [
          'head',
          e.resolved,
          () => h('h3', {}, e.callId ? `Needs a person: call ${e.callId}` : 'Parked: needs a person', h('span', { class: 'when' }, when(e.at))),
        ],
        ['detail', e.seq, () => h('p', {}, h('strong', {}, e.reason), `: ${e.detail}`)],
        [
          'resolved',
          e.resolved,
          () =>
            e.resolved
              ? h(
                  'div',
                  { class: 'meta' },
                  `Resolved: ${e.resolved.outcome}, by ${e.resolved.by} at ${when(e.resolved.at)}.`,
                  e.resolved.result ? payload(runId, 'Result given', e.resolved.result) : null,
                )
              : h('p', { class: 'meta' }, 'Open.'),
        ],
      ];
    case 'cancel':
      return [
        [
          'head',
          e.seq,
          () =>
            h(
              'h3',
              {},
              `Cancel requested by ${e.by}`,
              e.reason ? h('span', { class: 'muted' }, `: ${e.reason}`) : null,
              h('span', { class: 'when' }, when(e.at)),
            ),
        ],
      ];
    case 'end':
      if (e.status === 'completed')
        return [
          ['head', e.seq, () => h('h3', {}, 'Answer', h('span', { class: 'badge ok' }, 'completed'), h('span', { class: 'when' }, when(e.at)))],
          ['answer', e.answer, () => (e.answer ? payload(runId, '', e.answer, { prose: true }) : null)],
          ['output', e.output, () => (e.output ? payload(runId, 'Structured output', e.output) : null)],
        ];
      if (e.status === 'failed')
        return [
          ['head', e.seq, () => h('h3', {}, 'Run failed', h('span', { class: 'badge error' }, e.code ?? 'failed'), h('span', { class: 'when' }, when(e.at)))],
          ['message', e.seq, () => h('p', { class: 'error' }, e.message ?? '')],
        ];
      return [
        ['head', e.seq, () => h('h3', {}, 'Run cancelled', h('span', { class: 'when' }, when(e.at)))],
        [
          'unresolved',
          e.seq,
          () => ((e.unresolved?.length ?? 0) > 0 ? h('p', { class: 'meta' }, `Calls left unresolved: ${(e.unresolved ?? []).join(', ')}`) : null),
        ],
      ];
    default:
      return [];
  }
}

export class ConversationView {
  readonly el: HTMLElement;
  private readonly list = h('ol', { class: 'conversation' });
  private readonly drawn = new Map<string, Drawn>();

  constructor(
    private readonly runId: string,
    private readonly conversation: Conversation,
  ) {
    this.el = h(
      'section',
      { 'aria-labelledby': 'conversation-title' },
      h('h2', { id: 'conversation-title', class: 'visually-hidden' }, 'Conversation'),
      this.list,
    );
  }

  /** Draw the entries a fold changed (new ones at the end, in order). */
  update(ids: Iterable<string>): void {
    for (const id of new Set(ids)) {
      const entry = this.conversation.get(id);
      if (!entry) continue;
      let d = this.drawn.get(id);
      if (!d) {
        d = { li: h('li', { class: `entry entry-${entry.kind}`, id: `conv-${id.replace(/[^A-Za-z0-9_-]/g, '-')}` }), slots: new Map() };
        this.drawn.set(id, d);
        this.list.append(d.li);
      }
      if (entry.kind === 'turn') d.li.className = `entry entry-turn ${entry.state}`;
      for (const [key, value, draw] of slotsOf(this.runId, entry)) {
        const old = d.slots.get(key);
        if (old && old.value === value) continue;
        const el = h('div', { class: `slot slot-${key}` }, draw());
        if (old) old.el.replaceWith(el);
        else d.li.append(el);
        d.slots.set(key, { value, el });
      }
    }
  }
}
