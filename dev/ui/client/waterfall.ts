import type { LogEvent } from './types.js';

/**
 * The run on one time axis, drawn from the log's `at` times: each step (the events one worker wrote
 * under one lease, from its first write to its last), each model call (its reservation to its
 * response or failure) and each tool attempt (tool_started to its result), and the waits between
 * steps as gaps. Pure: positions are fractions of the run's span, computed from the events only
 * (plus `now` for what is still open), so a test checks them from a fixture log.
 */
export interface Bar {
  /**
   * A worker's step, a model call, a tool attempt, and for a workflow run each operation: a step's
   * attempt (`op`), a sleep, signal or approval wait (`wait`), a child run (`child`, with its page).
   */
  kind: 'step' | 'model' | 'tool' | 'op' | 'wait' | 'child';
  label: string;
  /** Fractions of the axis, 0..1. */
  x: number;
  width: number;
  start: number;
  end: number;
  /** Still running (drawn to now) or cut off by a crash (how long it ran is unknown). */
  open?: boolean;
  failed?: boolean;
  /** Try number, for model calls and tool attempts: a retry is drawn as its own bar, marked. */
  attempt?: number;
  /** Model calls: tokens and cost, for the label and the hover text. */
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
  /** Seq of the event the bar starts at (for links to the event and stable keys). */
  seq: number;
  /** A child run's id: the bar links to its page. */
  childRunId?: string;
}

export interface Gap {
  x: number;
  width: number;
  start: number;
  end: number;
  /** What the run waited for: a person, a signal, a timer, a child run, or its next tick. */
  reason: string;
}

export interface WaterfallLayout {
  start: number;
  end: number;
  bars: Bar[];
  gaps: Gap[];
}

const num = (v: unknown, fallback = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Writes made outside a worker's lease: the API's create and a fork's copy. */
const notAStep = (nonce: string) => nonce.startsWith('create:') || nonce.startsWith('fork:');

/** Lay the events out (in seq order); `now` ends what is still open. One pass: O(events). */
export function layoutWaterfall(events: readonly LogEvent[], now: number): WaterfallLayout {
  type Raw = Omit<Bar, 'x' | 'width'>;
  const bars: Raw[] = [];
  const gapsRaw: Omit<Gap, 'x' | 'width'>[] = [];
  const first = events[0];
  if (!first) return { start: now, end: now, bars: [], gaps: [] };
  const last = events[events.length - 1] as LogEvent;
  const terminal = ['run_completed', 'run_failed', 'run_cancelled'].includes(last.type);
  const end = terminal ? last.at : Math.max(now, last.at);

  // Steps: consecutive events by one writer.
  let step: Raw | undefined;
  let stepKey = '';
  let steps = 0;
  // What the run is waiting on, for the gap after a step.
  const waits = new Map<string, string>();
  const approvals = new Set<string>();
  const attention = new Set<number>();

  let model: Raw | undefined;
  const triesPerStep = new Map<number, number>();
  const tools = new Map<string, Raw>();
  const names = new Map<string, string>();

  const closeModel = (at: number, failed: boolean, open: boolean) => {
    if (!model) return;
    model.end = at;
    if (failed) model.failed = true;
    if (open) model.open = true;
    model = undefined;
  };
  const reserve = (e: LogEvent, r: { step?: unknown }) => {
    // A reservation with no answer before the next one: that call was cut off.
    closeModel(e.at, false, true);
    const n = num(r.step, triesPerStep.size + 1);
    const attempt = (triesPerStep.get(n) ?? 0) + 1;
    triesPerStep.set(n, attempt);
    model = { kind: 'model', label: `model step ${n}${attempt > 1 ? `, attempt ${attempt}` : ''}`, start: e.at, end, seq: e.seq, attempt, open: true };
    bars.push(model);
  };
  const waitReason = (): string => {
    if (attention.size > 0) return 'parked: waits for a person';
    if (approvals.size > 0) return 'waits for an approval';
    const kinds = [...new Set(waits.values())];
    if (kinds.length > 0) return `waits for ${kinds.join(', ')}`;
    return 'between steps';
  };

  for (const e of events) {
    const by = e.by as { epoch?: number; nonce?: string } | undefined;
    const nonce = by?.nonce ?? '';
    const key = `${num(by?.epoch)}:${nonce}`;
    // The worker's previous write in this same step (where a step with no marker began).
    const previousInStep = step && by && key === stepKey ? step.end : undefined;
    if (!notAStep(nonce) && by) {
      if (key !== stepKey || !step) {
        // Before the first step the run waited for a worker to pick it up.
        gapsRaw.push(step ? { start: step.end, end: e.at, reason: waitReason() } : { start: first.at, end: e.at, reason: 'queued for a worker' });
        steps++;
        step = { kind: 'step', label: `step ${steps} (lease epoch ${num(by.epoch)})`, start: e.at, end: e.at, seq: e.seq };
        bars.push(step);
        stepKey = key;
      }
      step.end = e.at;
    }
    switch (e.type) {
      case 'model_started':
        reserve(e, { step: e.step });
        break;
      case 'model_response': {
        for (const c of (e.calls as { callId?: string; name?: string }[] | undefined) ?? []) if (c.callId && c.name) names.set(c.callId, c.name);
        if (!model) reserve(e, {});
        const current = model as unknown as Raw;
        const usage = (e.usage as { inputTokens?: number; outputTokens?: number } | undefined) ?? {};
        current.inputTokens = num(usage.inputTokens);
        current.outputTokens = num(usage.outputTokens);
        current.costUsd = num(e.costUsd);
        delete current.open;
        closeModel(e.at, false, false);
        break;
      }
      case 'model_failed':
        if (model) {
          model.label += ` (${str(e.code) ?? 'failed'})`;
          delete model.open;
        }
        closeModel(e.at, true, false);
        break;
      case 'approval_requested':
        approvals.add(str(e.callId) ?? '?');
        break;
      case 'approval_decided':
        approvals.delete(str(e.callId) ?? '?');
        break;
      case 'tool_started': {
        const callId = str(e.callId) ?? '?';
        const before = tools.get(callId);
        if (before?.open) before.end = Math.min(e.at, before.end);
        const attempt = num(e.attempt, 1);
        const wait = e.wait as { kind?: string; signal?: string } | undefined;
        const name = names.get(callId) ?? '?';
        // Open until its result: drawn up to now (or the run's end), never past its deadline.
        const bar: Raw = {
          kind: 'tool',
          label: `${name} (${callId})${attempt > 1 ? `, attempt ${attempt}` : ''}`,
          start: e.at,
          end: Math.min(end, num(e.notAfter, end)),
          seq: e.seq,
          attempt,
          open: true,
        };
        if (wait?.kind) waits.set(callId, wait.kind === 'signal' ? `signal ${wait.signal ?? ''}`.trim() : wait.kind === 'child' ? 'a child run' : 'a timer');
        tools.set(callId, bar);
        bars.push(bar);
        break;
      }
      case 'tool_result': {
        const callId = str(e.callId) ?? '?';
        const bar = tools.get(callId);
        if (bar?.open && e.source !== 'human') {
          bar.end = e.at;
          delete bar.open;
          if (e.ok !== true) bar.failed = true;
        }
        waits.delete(callId);
        const reservation = e.reservation as { step?: number } | undefined;
        if (reservation) reserve(e, reservation);
        break;
      }
      case 'op_started': {
        const callId = `op-${num(e.op)}`;
        const before = tools.get(callId);
        if (before?.open) before.end = Math.min(e.at, before.end);
        const attempt = num(e.attempt, 1);
        const wait = e.wait as { kind?: string; signal?: string; runId?: string; definition?: { kind?: string; name?: string } } | undefined;
        const what = str(e.kind) === str(e.name) ? str(e.kind) : `${str(e.kind) ?? '?'} ${str(e.name) ?? '?'}`;
        const kind = wait?.kind === 'child' ? 'child' : wait?.kind ? 'wait' : 'op';
        const childRunId = wait?.kind === 'child' ? str(wait.runId) : undefined;
        const bar: Raw = {
          kind,
          label: `${what ?? '?'} (${callId})${attempt > 1 ? `, attempt ${attempt}` : ''}${childRunId ? ` → ${childRunId}` : ''}`,
          start: e.at,
          end: Math.min(end, num(e.notAfter, end)),
          seq: e.seq,
          attempt,
          open: true,
          ...(childRunId ? { childRunId } : {}),
        };
        if (!wait?.kind) waits.delete(callId);
        else {
          waits.set(
            callId,
            wait.kind === 'signal'
              ? `signal ${wait.signal ?? ''}`.trim()
              : wait.kind === 'child'
                ? 'a child run'
                : wait.kind === 'approval'
                  ? 'an approval'
                  : 'a timer',
          );
        }
        tools.set(callId, bar);
        bars.push(bar);
        break;
      }
      case 'op_retry':
      case 'op_result': {
        const callId = `op-${num(e.op)}`;
        const bar = tools.get(callId);
        if (bar?.open) {
          bar.end = e.at;
          delete bar.open;
          if (e.type === 'op_retry' || e.ok !== true) bar.failed = true;
        } else if (e.type === 'op_result' && e.kind === 'step' && !bar) {
          // A rerun step writes no marker: it ran after the worker's previous write of this step.
          bars.push({
            kind: 'op',
            label: `step ${str(e.name) ?? '?'} (${callId})`,
            start: previousInStep ?? e.at,
            end: e.at,
            seq: e.seq,
            ...(e.ok !== true ? { failed: true } : {}),
          });
        }
        // A retried step waits for its retryAt; a result ends any wait.
        if (e.type === 'op_result') waits.delete(callId);
        else waits.set(callId, 'a retry');
        break;
      }
      case 'attention_required':
        attention.add(e.seq);
        break;
      case 'attention_resolved':
        attention.delete(num(e.attentionSeq));
        break;
      default:
    }
  }

  const start = first.at;
  const span = Math.max(1, end - start);
  const place = <T extends { start: number; end: number }>(r: T): T & { x: number; width: number } => {
    const s = Math.min(Math.max(r.start, start), end);
    const t = Math.min(Math.max(r.end, s), end);
    return { ...r, x: (s - start) / span, width: (t - s) / span };
  };
  return { start, end, bars: bars.map(place), gaps: gapsRaw.filter((g) => g.end > g.start).map(place) };
}
