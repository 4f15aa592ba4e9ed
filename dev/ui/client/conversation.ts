import { attachmentRefsIn, type AttachmentRefView } from './attachment-refs.js';
import { when } from './format.js';
import { isBody, type Body, type LogEvent } from './types.js';

/**
 * The run as people read it: the input, what the assistant said each turn, each tool call with its
 * arguments and result, approvals, signals, follow-up messages, child runs, parks and errors, and
 * the answer. Folded from the log one event at a time, plus the stream's partial text of a model
 * call still running. Pure (no DOM, no clock): the view renders the entries each fold says changed.
 *
 * Entries keep their order of first appearance; an entry that changes later (a tool call gets its
 * result, a turn its answer) is updated in place, and each part that changes gets a new object, so
 * the view redraws only the parts whose object it has not drawn (an opened payload stays open).
 */

/** A file the input refers to (uploaded through the API, stored by sha256): shown as a link, never inlined. */
export type Attachment = AttachmentRefView;

export interface InputEntry {
  kind: 'input';
  id: string;
  seq: number;
  at: number;
  agent: string;
  input: Body;
  attachments: Attachment[];
  parent?: { runId: string; callId: string };
  forkedFrom?: { runId: string; seq: number };
}

export interface TurnEntry {
  kind: 'turn';
  id: string;
  /** Seq of the event that holds this model call's reservation (the stream's `callSeq`). */
  callSeq: number;
  at: number;
  step: number;
  /** Which try at this model step (1-based): a crashed or failed call is tried again as a new reservation. */
  attempt: number;
  purpose?: string;
  /** waiting: reserved, nothing yet; streaming: partial text arrived; abandoned: superseded with no answer. */
  state: 'waiting' | 'streaming' | 'done' | 'failed' | 'abandoned';
  /** Streamed text so far, chunks by index (only while the call has no answer). */
  chunks: string[];
  /** The answer as logged: replaces the streamed text. */
  answer?: {
    text: Body | null;
    stopReason: string;
    inputTokens: number;
    outputTokens: number;
    costUsd: number;
    output?: Body;
    outputError?: string;
    at: number;
  };
  failure?: { code: string; message: string; retryable: boolean };
  callIds: string[];
}

export interface ToolAttemptPart {
  attempt: number;
  at: number;
  notAfter: number;
}

export interface ToolEntry {
  kind: 'tool';
  id: string;
  callId: string;
  name: string;
  at: number;
  policy?: string;
  args?: Body;
  argsError?: string;
  approval?: { asked: number; expiresAt?: number; decision?: string; decidedBy?: string; comment?: string; editedArgs?: Body; decidedAt?: number };
  attempts: ToolAttemptPart[];
  wait?: { kind: 'signal'; signal: string; until: number } | { kind: 'timer'; until: number } | { kind: 'child'; runId: string; until: number };
  result?: { ok: boolean; output?: Body; source: string; errorCode?: string; by?: string; at: number };
  verified?: string;
}

export interface MessageEntry {
  kind: 'message';
  id: string;
  seq: number;
  at: number;
  input: Body;
  sentBy: string;
  attachments: Attachment[];
}

export interface AttentionEntry {
  kind: 'attention';
  id: string;
  seq: number;
  at: number;
  reason: string;
  detail: string;
  callId?: string;
  resolved?: { outcome: string; by: string; result?: Body; at: number };
}

export interface CancelEntry {
  kind: 'cancel';
  id: string;
  seq: number;
  at: number;
  by: string;
  reason?: string;
}

export interface EndEntry {
  kind: 'end';
  id: string;
  seq: number;
  at: number;
  status: 'completed' | 'failed' | 'cancelled';
  answer?: Body;
  output?: Body;
  code?: string;
  message?: string;
  unresolved?: string[];
}

export type Entry = InputEntry | TurnEntry | ToolEntry | MessageEntry | AttentionEntry | CancelEntry | EndEntry;

/** A stream item that is not an event (stream-wire.md). */
export type TextItem = { type: 'text'; callSeq: number; attempt: number; index: number; text: string };
export type DiscardItem = { type: 'discard'; callSeq: number };

const num = (v: unknown, fallback = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const body = (v: unknown): Body | undefined => (isBody(v) ? v : undefined);

/** Files referred to in an inline input (attachment-refs.ts: the one reader of references the page has). */
export function attachmentsOf(input: Body | undefined): Attachment[] {
  return input?.kind === 'inline' ? attachmentRefsIn(input.value) : [];
}

/** The streamed text of a turn so far. */
export function partialText(turn: TurnEntry): string {
  return turn.chunks.join('');
}

export class Conversation {
  readonly entries: Entry[] = [];
  private readonly byId = new Map<string, Entry>();
  /** Turns by the seq of their reservation. */
  private readonly turns = new Map<number, TurnEntry>();
  /** The reservation not yet answered, if any. */
  private open: TurnEntry | undefined;
  private readonly triesPerStep = new Map<number, number>();
  private readonly policies = new Map<string, string>();
  /** Chunks that came before their reservation's event (not in the contract's order; kept, not lost). */
  private readonly early = new Map<number, TextItem[]>();
  lastSeq = 0;

  get(id: string): Entry | undefined {
    return this.byId.get(id);
  }

  turn(callSeq: number): TurnEntry | undefined {
    return this.turns.get(callSeq);
  }

  private add<E extends Entry>(entry: E): E {
    this.entries.push(entry);
    this.byId.set(entry.id, entry);
    return entry;
  }

  private tool(callId: string, at: number): ToolEntry {
    const found = this.byId.get(`call:${callId}`);
    if (found?.kind === 'tool') return found;
    return this.add<ToolEntry>({ kind: 'tool', id: `call:${callId}`, callId, name: '?', at, attempts: [] });
  }

  /** Fold one event (seq order; a repeat is ignored). Returns the ids of the entries it added or changed. */
  apply(e: LogEvent): string[] {
    if (e.seq <= this.lastSeq) return [];
    this.lastSeq = e.seq;
    const changed: string[] = [];
    const touch = (entry: Entry | undefined) => {
      if (entry) changed.push(entry.id);
    };
    switch (e.type) {
      case 'run_started': {
        for (const t of (e.tools as { name?: string; policy?: string }[] | undefined) ?? []) if (t.name && t.policy) this.policies.set(t.name, t.policy);
        const agent = (e.agent as { name?: string; version?: string } | undefined) ?? {};
        const input = body(e.input) ?? { kind: 'inline', value: null };
        const parent = e.parent as InputEntry['parent'] | undefined;
        const forkedFrom = e.forkedFrom as InputEntry['forkedFrom'] | undefined;
        touch(
          this.add<InputEntry>({
            kind: 'input',
            id: `e${e.seq}`,
            seq: e.seq,
            at: e.at,
            agent: `${agent.name ?? '?'}@${agent.version ?? '?'}`,
            input,
            attachments: attachmentsOf(input),
            ...(parent ? { parent } : {}),
            ...(forkedFrom ? { forkedFrom } : {}),
          }),
        );
        break;
      }
      case 'model_started':
        this.reserve(e, { step: e.step, purpose: e.purpose }, changed);
        break;
      case 'model_response': {
        const turn = this.open ?? this.reserve(e, { step: this.triesPerStep.size + 1 }, changed);
        this.open = undefined;
        const usage = (e.usage as { inputTokens?: number; outputTokens?: number } | undefined) ?? {};
        const output = body(e.output);
        const outputError = str(e.outputError);
        turn.answer = {
          text: body(e.text) ?? null,
          stopReason: str(e.stopReason) ?? '',
          inputTokens: num(usage.inputTokens),
          outputTokens: num(usage.outputTokens),
          costUsd: num(e.costUsd),
          at: e.at,
          ...(output ? { output } : {}),
          ...(outputError ? { outputError } : {}),
        };
        if (str(e.purpose)) turn.purpose = str(e.purpose);
        turn.state = 'done';
        turn.chunks = [];
        touch(turn);
        for (const c of (e.calls as { callId?: string; name?: string; args?: unknown; argsError?: string }[] | undefined) ?? []) {
          if (!c.callId) continue;
          const entry = this.tool(c.callId, e.at);
          entry.name = c.name ?? '?';
          const policy = this.policies.get(entry.name);
          if (policy) entry.policy = policy;
          const args = body(c.args);
          if (args) entry.args = args;
          if (c.argsError) entry.argsError = c.argsError;
          turn.callIds = [...turn.callIds, c.callId];
          touch(entry);
        }
        break;
      }
      case 'model_failed': {
        const turn = this.open;
        this.open = undefined;
        if (turn) {
          turn.state = 'failed';
          turn.chunks = [];
          turn.failure = { code: str(e.code) ?? 'failed', message: str(e.message) ?? '', retryable: e.retryable === true };
          touch(turn);
        }
        break;
      }
      case 'approval_requested': {
        const entry = this.tool(str(e.callId) ?? '?', e.at);
        const expiresAt = typeof e.expiresAt === 'number' ? e.expiresAt : undefined;
        entry.approval = { asked: e.at, ...(expiresAt !== undefined ? { expiresAt } : {}) };
        touch(entry);
        break;
      }
      case 'approval_decided': {
        const entry = this.tool(str(e.callId) ?? '?', e.at);
        const editedArgs = body(e.args);
        const comment = str(e.comment);
        entry.approval = {
          ...(entry.approval ?? { asked: e.at }),
          decision: str(e.decision) ?? '?',
          decidedBy: str(e.decidedBy) ?? '?',
          decidedAt: e.at,
          ...(editedArgs ? { editedArgs } : {}),
          ...(comment ? { comment } : {}),
        };
        touch(entry);
        break;
      }
      case 'tool_started': {
        const entry = this.tool(str(e.callId) ?? '?', e.at);
        entry.attempts = [...entry.attempts, { attempt: num(e.attempt, entry.attempts.length + 1), at: e.at, notAfter: num(e.notAfter) }];
        const wait = e.wait as { kind?: string; signal?: string; runId?: string; until?: number } | undefined;
        if (wait?.kind === 'signal') entry.wait = { kind: 'signal', signal: wait.signal ?? '?', until: num(wait.until) };
        else if (wait?.kind === 'timer') entry.wait = { kind: 'timer', until: num(wait.until) };
        else if (wait?.kind === 'child' && wait.runId) entry.wait = { kind: 'child', runId: wait.runId, until: num(wait.until) };
        // A new attempt after a result (a person chose "rerun"): the old result no longer stands.
        delete entry.result;
        touch(entry);
        break;
      }
      case 'tool_result': {
        const entry = this.tool(str(e.callId) ?? '?', e.at);
        const output = body(e.output);
        const errorCode = str(e.errorCode);
        const by = str(e.sentBy);
        entry.result = {
          ok: e.ok === true,
          source: str(e.source) ?? 'tool',
          at: e.at,
          ...(output ? { output } : {}),
          ...(errorCode ? { errorCode } : {}),
          ...(by ? { by } : {}),
        };
        touch(entry);
        // The result that resolved its turn may carry the next model call's reservation.
        const reservation = e.reservation as { step?: number } | undefined;
        if (reservation) this.reserve(e, reservation, changed);
        break;
      }
      case 'tool_verified': {
        const entry = this.tool(str(e.callId) ?? '?', e.at);
        entry.verified = str(e.status) ?? 'unknown';
        touch(entry);
        break;
      }
      case 'attention_required': {
        const callId = str(e.callId);
        touch(
          this.add<AttentionEntry>({
            kind: 'attention',
            id: `e${e.seq}`,
            seq: e.seq,
            at: e.at,
            reason: str(e.reason) ?? '',
            detail: str(e.detail) ?? '',
            ...(callId ? { callId } : {}),
          }),
        );
        break;
      }
      case 'attention_resolved': {
        const asked = this.byId.get(`e${num(e.attentionSeq)}`);
        const result = body(e.result);
        const resolved = { outcome: str(e.outcome) ?? '?', by: str(e.resolvedBy) ?? '?', at: e.at, ...(result ? { result } : {}) };
        if (asked?.kind === 'attention') {
          asked.resolved = resolved;
          touch(asked);
        }
        // A person's "succeeded" or "failed" is the call's result.
        const callId = str(e.callId);
        if (callId && (e.outcome === 'succeeded' || e.outcome === 'failed')) {
          const entry = this.tool(callId, e.at);
          entry.result = { ok: e.outcome === 'succeeded', source: 'human', by: resolved.by, at: e.at, ...(result ? { output: result } : {}) };
          touch(entry);
        }
        break;
      }
      case 'user_message': {
        const input = body(e.input) ?? { kind: 'inline', value: null };
        touch(
          this.add<MessageEntry>({
            kind: 'message',
            id: `e${e.seq}`,
            seq: e.seq,
            at: e.at,
            input,
            sentBy: str(e.sentBy) ?? '?',
            attachments: attachmentsOf(input),
          }),
        );
        break;
      }
      case 'cancel_requested': {
        const reason = str(e.reason);
        touch(this.add<CancelEntry>({ kind: 'cancel', id: `e${e.seq}`, seq: e.seq, at: e.at, by: str(e.requestedBy) ?? '?', ...(reason ? { reason } : {}) }));
        break;
      }
      case 'run_completed': {
        const answer = body(e.answer);
        const output = body(e.output);
        touch(
          this.add<EndEntry>({
            kind: 'end',
            id: `e${e.seq}`,
            seq: e.seq,
            at: e.at,
            status: 'completed',
            ...(answer ? { answer } : {}),
            ...(output ? { output } : {}),
          }),
        );
        break;
      }
      case 'run_failed':
        touch(
          this.add<EndEntry>({ kind: 'end', id: `e${e.seq}`, seq: e.seq, at: e.at, status: 'failed', code: str(e.code) ?? '?', message: str(e.message) ?? '' }),
        );
        break;
      case 'run_cancelled':
        touch(
          this.add<EndEntry>({
            kind: 'end',
            id: `e${e.seq}`,
            seq: e.seq,
            at: e.at,
            status: 'cancelled',
            unresolved: (e.unresolved as string[] | undefined) ?? [],
          }),
        );
        break;
      default:
    }
    return changed;
  }

  /** A new model call reserved at `e.seq`: a turn waiting for its text. An unanswered earlier one was abandoned. */
  private reserve(e: LogEvent, reservation: { step?: unknown; purpose?: unknown }, changed: string[]): TurnEntry {
    if (this.open) {
      this.open.state = 'abandoned';
      this.open.chunks = [];
      changed.push(this.open.id);
    }
    const step = num(reservation.step, this.triesPerStep.size + 1);
    const attempt = (this.triesPerStep.get(step) ?? 0) + 1;
    this.triesPerStep.set(step, attempt);
    const purpose = str(reservation.purpose);
    const turn = this.add<TurnEntry>({
      kind: 'turn',
      id: `turn:${e.seq}`,
      callSeq: e.seq,
      at: e.at,
      step,
      attempt,
      state: 'waiting',
      chunks: [],
      callIds: [],
      ...(purpose ? { purpose } : {}),
    });
    this.turns.set(e.seq, turn);
    this.open = turn;
    changed.push(turn.id);
    for (const item of this.early.get(e.seq) ?? []) this.text(item);
    this.early.delete(e.seq);
    return turn;
  }

  /**
   * A streamed chunk: kept only for a call with no answer yet (once the log has the answer, its
   * text is the truth). Chunks are placed by index, so a repeat changes nothing. Returns the id of
   * the turn it changed.
   */
  text(item: TextItem): string | undefined {
    const turn = this.turns.get(item.callSeq);
    if (!turn) {
      if (item.callSeq > this.lastSeq) this.early.set(item.callSeq, [...(this.early.get(item.callSeq) ?? []), item]);
      return undefined;
    }
    if (turn.state !== 'waiting' && turn.state !== 'streaming') return undefined;
    if (turn.chunks[item.index] === item.text) return undefined;
    const chunks = turn.chunks.slice();
    chunks[item.index] = item.text;
    // A gap (a lost chunk) reads as nothing rather than "undefined".
    for (let i = 0; i < chunks.length; i++) chunks[i] ??= '';
    turn.chunks = chunks;
    turn.state = 'streaming';
    return turn.id;
  }

  /** The attempt at callSeq was abandoned: drop its partial text. */
  discard(item: DiscardItem): string | undefined {
    this.early.delete(item.callSeq);
    const turn = this.turns.get(item.callSeq);
    if (!turn || turn.chunks.length === 0) return undefined;
    turn.chunks = [];
    if (turn.state === 'streaming') turn.state = turn === this.open ? 'waiting' : 'abandoned';
    return turn.id;
  }
}

/** When an approval was asked and until when it may be answered, with dates unless today (the approval card's first line). */
export function approvalAsked(a: { asked: number; expiresAt?: number }, now: number = Date.now()): string {
  return `Approval asked at ${when(a.asked, now)}${a.expiresAt ? `, rejected if unanswered by ${when(a.expiresAt, now)}` : ''}.`;
}
