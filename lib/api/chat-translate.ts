import type { Body } from '../core/body.js';
import { chatMessageId, type ApprovalData, type LogbookUIChunk, type ReplayData, type WaitData } from '../chat/ui-chunks.js';
import type { StreamItem } from './stream-merge.js';

/**
 * A run's stream items (stream-merge.ts) as the AI SDK's UI message stream: one assistant
 * message per user turn (run_started or a user_message, to the run's end or the next turn), a
 * step per model call, a text part per answer, a tool part per call (Logbook's call id is the
 * toolCallId), data parts for approvals, waits, attention and structured output.
 *
 * Pure and deterministic: the same items give the same chunks, so a reader that comes back with a
 * cursor gets its state back by applying the items up to it again with the output dropped
 * (chat-read.ts). A client cannot take text back once it has it: where text already sent is not
 * the run's (an abandoned attempt, an answer recorded otherwise than it streamed) the response
 * ends with a `data-replay` part and the client replays the message from the log.
 */

/** Why the response ends after an item's chunks. */
export type ChatEnd =
  /** the turn is over (finish sent) */
  | 'finish'
  /** sent text must be taken back: replay the message */
  | 'replay'
  /** the next turn starts at this item: it is not applied, the message is finished before it */
  | 'cut';

export interface ChatStep {
  chunks: LogbookUIChunk[];
  end?: ChatEnd;
}

/** Resolved payloads: inline values as they are, blobs as the I/O layer read them. */
export interface BodyValues {
  value(body: Body | null | undefined): unknown;
}

interface CallState {
  name: string;
  input: unknown;
  /** What the call waits for, if anything. */
  pending?: 'approval' | 'wait' | 'attention';
  /** Rejected or expired: the tool part is denied, its error result is not shown again. */
  denied?: boolean;
  done?: boolean;
}

type Ev = Record<string, unknown> & { seq: number; type: string };

const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
const iso = (ms: unknown): string | undefined => (typeof ms === 'number' ? new Date(ms).toISOString() : undefined);

export class ChatTranslator {
  /** Seq of the user event whose answer is open; 0: no message open. */
  turn = 0;
  private inStep = false;
  /** The model call open (reserved, unanswered) and whether it is a context summary (not shown). */
  private open: { callSeq: number; summary: boolean } | undefined;
  /** The text part streaming for the open call, and what was sent of it. */
  private part: { callSeq: number; id: string; preview: string; lost?: boolean } | undefined;
  private calls = new Map<string, CallState>();
  /** Run-level attentions open (no call). */
  private runAttention = new Set<number>();
  private approvals = new Map<string, ApprovalData>();
  private attentions = new Map<number, { reason: string; callId?: string; detail: string }>();
  private lastWaits = new Map<string, WaitData>();

  constructor(
    private readonly runId: string,
    private readonly values: BodyValues,
  ) {}

  /**
   * The turn waits for a person: an approval or an attention is open and nothing else runs (no
   * model call, no call without a result). A response that reaches the log's end here finishes.
   */
  get paused(): boolean {
    if (this.turn === 0 || this.open) return false;
    if (this.runAttention.size > 0) return true;
    let blocked = false;
    for (const c of this.calls.values()) {
      if (c.pending === 'approval' || c.pending === 'attention') blocked = true;
      else if (!c.done && !c.denied && c.pending !== 'wait') return false;
    }
    return blocked;
  }

  /** The chunks that end a paused response (the message stays open: it goes on once answered). */
  pauseChunks(): LogbookUIChunk[] {
    return [{ type: 'finish', finishReason: 'tool-calls' }];
  }

  /** Drop what the caught-up state knows of a call open at the cursor when the cursor says none is. */
  settle(position: { open: number }): void {
    if (position.open === 0) {
      this.open = undefined;
      this.part = undefined;
    }
  }

  /** The preview of the open call could not be read back whole (its chunks expired): its text must be replayed. */
  markPreviewLost(): void {
    if (this.part) this.part.lost = true;
  }

  apply(item: StreamItem): ChatStep {
    if (item.type === 'text') return { chunks: this.onText(item.callSeq, item.text) };
    if (item.type === 'discard') return this.onDiscard(item.callSeq);
    return this.onEvent(item.event as Ev);
  }

  private onText(callSeq: number, delta: string): LogbookUIChunk[] {
    if (this.turn === 0 || !this.open || this.open.summary || this.open.callSeq !== callSeq) return [];
    const out = this.ensureStep();
    if (!this.part) {
      this.part = { callSeq, id: `text-${callSeq}`, preview: '' };
      out.push({ type: 'text-start', id: this.part.id });
    }
    this.part.preview += delta;
    out.push({ type: 'text-delta', id: this.part.id, delta });
    return out;
  }

  private onDiscard(callSeq: number): ChatStep {
    const part = this.part;
    this.open = undefined;
    this.part = undefined;
    if (this.turn === 0 || !part || part.callSeq !== callSeq) return { chunks: [] };
    const chunks: LogbookUIChunk[] = [{ type: 'text-end', id: part.id }];
    if (this.inStep) chunks.push({ type: 'finish-step' });
    this.inStep = false;
    chunks.push(this.replay('attempt_abandoned'));
    return { chunks, end: 'replay' };
  }

  /** The cursor is the chat cursor of the item, which the I/O layer fills in (chat-read.ts). */
  private replay(reason: ReplayData['reason']): LogbookUIChunk {
    return { type: 'data-replay', data: { reason, cursor: '' }, transient: true };
  }

  private ensureStep(): LogbookUIChunk[] {
    if (this.inStep) return [];
    this.inStep = true;
    return [{ type: 'start-step' }];
  }

  /** Close the open message: its text part, its step, then `finish` (and what the end adds before it). */
  private close(tail: LogbookUIChunk[]): LogbookUIChunk[] {
    const out: LogbookUIChunk[] = [];
    if (this.part) out.push({ type: 'text-end', id: this.part.id });
    if (this.inStep) out.push({ type: 'finish-step' });
    out.push(...tail);
    this.turn = 0;
    this.inStep = false;
    this.open = undefined;
    this.part = undefined;
    this.calls = new Map();
    this.runAttention = new Set();
    this.approvals.clear();
    this.attentions.clear();
    this.lastWaits.clear();
    return out;
  }

  private onEvent(e: Ev): ChatStep {
    if (e.type === 'run_started' || e.type === 'user_message') {
      if (this.turn !== 0) return { chunks: this.close([{ type: 'finish', finishReason: 'other' }]), end: 'cut' };
      this.turn = e.seq;
      return { chunks: [{ type: 'start', messageId: chatMessageId(this.runId, e.seq) }] };
    }
    if (this.turn === 0) return { chunks: [] };
    switch (e.type) {
      case 'model_started':
        return { chunks: this.onReservation(e) };
      case 'model_response':
        return this.onResponse(e);
      case 'tool_started':
        return { chunks: this.onToolStarted(e) };
      case 'tool_result': {
        const chunks = this.onToolResult(e);
        if (e.reservation !== undefined) chunks.push(...this.onReservation(e));
        return { chunks };
      }
      case 'approval_requested':
        return { chunks: this.onApprovalRequested(e) };
      case 'approval_decided':
        return { chunks: this.onApprovalDecided(e) };
      case 'attention_required':
        return { chunks: this.onAttention(e) };
      case 'attention_resolved':
        return { chunks: this.onAttentionResolved(e) };
      case 'run_completed': {
        const output = e.output === undefined ? [] : [{ type: 'data-output' as const, id: 'output', data: this.values.value(e.output as Body) }];
        return { chunks: this.close([...output, { type: 'finish', finishReason: 'stop' }]), end: 'finish' };
      }
      case 'run_failed':
        return {
          chunks: this.close([
            { type: 'error', errorText: `run failed (${text(e.code)}): ${text(e.message)}` },
            { type: 'finish', finishReason: 'error' },
          ]),
          end: 'finish',
        };
      case 'run_cancelled':
        return {
          chunks: this.close([
            { type: 'abort', reason: 'run cancelled' },
            { type: 'finish', finishReason: 'other' },
          ]),
          end: 'finish',
        };
      default:
        return { chunks: [] };
    }
  }

  /** A new model call: the previous step ends; this one starts with its first content. */
  private onReservation(e: Ev): LogbookUIChunk[] {
    const out: LogbookUIChunk[] = this.inStep ? [{ type: 'finish-step' }] : [];
    this.inStep = false;
    this.part = undefined;
    this.open = { callSeq: e.seq, summary: e.purpose === 'summary' };
    return out;
  }

  private onResponse(e: Ev): ChatStep {
    const open = this.open;
    const part = this.part;
    this.open = undefined;
    this.part = undefined;
    if (e.purpose === 'summary' || open?.summary) return { chunks: [] };
    const final = text(this.values.value(e.text as Body | null));
    const calls = (e.calls ?? []) as { callId: string; name: string; args: Body; argsError?: string }[];
    const out: LogbookUIChunk[] = [];
    let superseded = false;
    if (part) {
      if (!part.lost && final.startsWith(part.preview)) {
        const rest = final.slice(part.preview.length);
        if (rest) out.push({ type: 'text-delta', id: part.id, delta: rest });
        out.push({ type: 'text-end', id: part.id });
      } else {
        // What streamed is not what the log recorded (redacted, or cut short): the log's text follows.
        out.push({ type: 'text-end', id: part.id });
        superseded = true;
      }
    }
    if (!part || superseded) {
      if (final || calls.length > 0) out.push(...this.ensureStep());
      if (final) {
        const id = `text-${e.seq}`;
        out.push({ type: 'text-start', id }, { type: 'text-delta', id, delta: final }, { type: 'text-end', id });
      }
    }
    for (const c of calls) {
      const input = c.argsError === undefined ? this.values.value(c.args) : undefined;
      this.calls.set(c.callId, { name: c.name, input });
      out.push(
        c.argsError === undefined
          ? { type: 'tool-input-available', toolCallId: c.callId, toolName: c.name, input }
          : { type: 'tool-input-error', toolCallId: c.callId, toolName: c.name, input, errorText: c.argsError },
      );
    }
    if (!superseded) return { chunks: out };
    out.push(this.replay('text_superseded'));
    return { chunks: out, end: 'replay' };
  }

  private onToolStarted(e: Ev): LogbookUIChunk[] {
    const call = this.calls.get(String(e.callId));
    const wait = e.wait as { kind: WaitData['kind']; signal?: string; runId?: string; until?: number } | undefined;
    if (!call || !wait) return [];
    call.pending = 'wait';
    const data = this.waitData(String(e.callId), call, wait, 'waiting');
    this.lastWaits.set(data.callId, data);
    return [{ type: 'data-wait', id: data.callId, data }];
  }

  private waitData(
    callId: string,
    call: CallState,
    wait: { kind: WaitData['kind']; signal?: string; runId?: string; until?: number },
    status: WaitData['status'],
  ): WaitData {
    const until = iso(wait.until);
    return {
      callId,
      tool: call.name,
      kind: wait.kind,
      ...(wait.signal !== undefined ? { signal: wait.signal } : {}),
      ...(wait.runId !== undefined ? { childRunId: wait.runId } : {}),
      ...(until ? { until } : {}),
      status,
    };
  }

  private onToolResult(e: Ev): LogbookUIChunk[] {
    const callId = String(e.callId);
    const call = this.calls.get(callId);
    if (!call || call.done) return [];
    const out: LogbookUIChunk[] = [];
    if (call.pending === 'wait') out.push({ type: 'data-wait', id: callId, data: { ...this.lastWait(callId, call), status: 'done' } });
    call.pending = undefined;
    call.done = true;
    if (call.denied) return out;
    const value = this.values.value(e.output as Body);
    out.push(
      e.ok === true
        ? { type: 'tool-output-available', toolCallId: callId, output: value }
        : { type: 'tool-output-error', toolCallId: callId, errorText: text(value) || text(e.errorCode) || 'tool failed' },
    );
    return out;
  }

  private lastWait(callId: string, call: CallState): WaitData {
    return this.lastWaits.get(callId) ?? { callId, tool: call.name, kind: 'signal', status: 'done' };
  }

  private onApprovalRequested(e: Ev): LogbookUIChunk[] {
    const callId = String(e.callId);
    const call = this.calls.get(callId);
    if (!call) return [];
    call.pending = 'approval';
    const expiresAt = iso(e.expiresAt);
    const data: ApprovalData = {
      callId,
      tool: call.name,
      input: call.input,
      argsHash: String(e.argsHash),
      status: 'requested',
      ...(expiresAt ? { expiresAt } : {}),
    };
    this.approvals.set(callId, data);
    return [
      { type: 'tool-approval-request', approvalId: callId, toolCallId: callId },
      { type: 'data-approval', id: callId, data },
    ];
  }

  private onApprovalDecided(e: Ev): LogbookUIChunk[] {
    const callId = String(e.callId);
    const call = this.calls.get(callId);
    const asked = this.approvals.get(callId);
    if (!call || !asked) return [];
    call.pending = undefined;
    const decision = String(e.decision);
    const comment = typeof e.comment === 'string' ? { comment: e.comment } : {};
    const out: LogbookUIChunk[] = [];
    if (decision === 'edit') {
      call.input = this.values.value(e.args as Body);
      out.push({ type: 'tool-input-available', toolCallId: callId, toolName: call.name, input: call.input });
      out.push({ type: 'data-approval', id: callId, data: { ...asked, input: call.input, argsHash: String(e.argsHash), status: 'edited', ...comment } });
    } else if (decision === 'approve') {
      out.push({ type: 'data-approval', id: callId, data: { ...asked, status: 'approved', ...comment } });
    } else {
      call.denied = true;
      out.push({ type: 'tool-output-denied', toolCallId: callId });
      out.push({ type: 'data-approval', id: callId, data: { ...asked, status: decision === 'expire' ? 'expired' : 'rejected', ...comment } });
    }
    return out;
  }

  private onAttention(e: Ev): LogbookUIChunk[] {
    const callId = typeof e.callId === 'string' ? e.callId : undefined;
    const a = { reason: String(e.reason), detail: String(e.detail), ...(callId ? { callId } : {}) };
    this.attentions.set(e.seq, a);
    const call = callId ? this.calls.get(callId) : undefined;
    if (call) call.pending = 'attention';
    else this.runAttention.add(e.seq);
    return [{ type: 'data-attention', id: `attention-${e.seq}`, data: { seq: e.seq, ...a, status: 'open' } }];
  }

  private onAttentionResolved(e: Ev): LogbookUIChunk[] {
    const seq = Number(e.attentionSeq);
    const a = this.attentions.get(seq);
    this.runAttention.delete(seq);
    if (!a) return [];
    const call = a.callId ? this.calls.get(a.callId) : undefined;
    if (call?.pending === 'attention') call.pending = undefined;
    return [{ type: 'data-attention', id: `attention-${seq}`, data: { seq, ...a, status: 'resolved', outcome: String(e.outcome) } }];
  }
}
