import { parseEvent, type RunEvent } from '../../core/events.js';
import type { RunState } from '../../core/state.js';
import type { OpState } from '../../core/workflow-state.js';
import type { RunHead } from '../../ports/run-heads.js';
import type { RunRef } from '../../core/run-ref.js';
import type { EngineDeps } from '../engine.js';
import { TRACE_FLUSH_MS } from '../../core/limits.js';
import type { EngineTracer } from './engine-tracer.js';
import { SpanProjector } from './log-spans.js';
import { rootSpanIdOf, spanIdOf, stepSpanIdOf, traceIdOf, type TraceSpan } from './trace-span.js';

/** The reason the flush timer is stopped with: a plain value, since abort() without one builds a DOMException (and its stack) every step. */
const SENT = 'sent';

export type StepPhase = 'claim' | 'load' | 'turns' | 'release';

/** What the step loaded: the first emit reads what it needs of the log from these. */
interface Loaded {
  state: RunState;
  /** The head's lastSeq when the step claimed: every event up to it was traced by the step that wrote it. */
  projectedSeq: number;
  /** The log's lastSeq when the step loaded it. */
  loadedSeq: number;
  /** The first seq that may open a span this step closes (an open model call, tool call or approval). */
  openFrom: number;
}

/**
 * The spans of one step (one lease epoch), made from the events it appends (SpanProjector) plus
 * its phases (claim, load, turns, release). The first emit also covers what a dead worker left:
 * events after the claimed head's lastSeq were written by a step that never got to project them,
 * so it may never have sent their spans either; they are projected again (same ids) under a step
 * span rebuilt from their epoch. Tracing never fails a step: every error here is logged and dropped.
 */
export class StepTrace {
  private projector?: SpanProjector;
  private loadedRun?: Loaded;
  private pending: RunEvent[] = [];
  /** The spans of the current round, held for `committed` (only when the tracer counts anything there). */
  private uncommitted: TraceSpan[] = [];
  private phases: { name: StepPhase; start: number; end: number; round: number }[] = [];
  private stepSent = false;
  private round = 0;
  private warned = false;
  private readonly traceId: string;
  private readonly stepId: string;

  constructor(
    private readonly tracer: EngineTracer,
    private readonly deps: EngineDeps,
    private readonly run: RunRef,
    private readonly claimedAt: number,
    readonly epoch: number,
  ) {
    this.traceId = traceIdOf(run);
    this.stepId = stepSpanIdOf(run, epoch);
    this.phase('claim', claimedAt, deps.clock.now());
  }

  phase(name: StepPhase, start: number, end: number): void {
    if (name === 'turns') this.round++;
    this.phases.push({ name, start, end, round: this.round });
  }

  loaded(state: RunState, head: RunHead, loadStart: number): void {
    this.phase('load', loadStart, this.deps.clock.now());
    let openFrom = state.openModel?.seq ?? Infinity;
    // Only the latest response's calls can be open: the model is not called again before each
    // call of its previous response has a result (so a long run costs no scan of all its calls).
    for (const callId of state.turnCalls) {
      const call = state.calls[callId];
      if (call?.status === 'started') openFrom = Math.min(openFrom, call.modelSeq + 1);
      if (call?.approval?.status === 'pending') openFrom = Math.min(openFrom, call.approval.requestedSeq);
    }
    // A workflow's open waits are seeded from the state (SpanProjector.seedWaits); its open steps
    // (an attempt, a retry's back-off: short-lived) are read back from their first event.
    const seeded = (state.workflow?.ops ?? []).filter(
      (op): op is OpState => op !== null && op.status !== 'done' && op.wait !== undefined && op.startedBy !== undefined,
    );
    for (const op of state.workflow?.ops ?? []) if (op && op.status !== 'done' && !seeded.includes(op)) openFrom = Math.min(openFrom, op.seq);
    this.loadedRun = { state, projectedSeq: head.lastSeq, loadedSeq: state.lastSeq, openFrom };
    this.projector = new SpanProjector({
      run: this.run,
      started: state.started,
      calls: () => state.calls,
      usage: () => state.usage,
      payloads: this.tracer.payloads === true,
      step: { epoch: this.epoch, start: this.claimedAt },
    });
    this.projector.seedWaits(seeded);
  }

  /** An event this step appended (it is in the log). */
  saw(event: RunEvent): void {
    this.pending.push(event);
  }

  /**
   * Record the spans of everything seen since the last emit. The first one sends the step's own
   * span (and, after a crash, the dead step's); `flush` waits for the SDK to send them.
   */
  async emit(outcome: string, flush: boolean): Promise<void> {
    try {
      const spans: TraceSpan[] = [];
      if (!this.stepSent) {
        spans.push(...(await this.recovered()));
        // The phases so far (claim, load, turns) are events of the step span: one span a step, not four.
        spans.push(this.stepSpan(outcome));
        this.phases = [];
        this.stepSent = true;
      }
      if (this.projector && this.pending.length > 0) spans.push(...this.projector.feed(this.pending, true, this.epoch));
      this.pending = [];
      // Phases after the step span went out (its release, another round): spans of their own.
      spans.push(...this.phases.map((p) => this.phaseSpan(p)));
      this.phases = [];
      this.tracer.record(spans);
      if (this.tracer.committed) this.uncommitted.push(...spans);
      if (flush) await this.flush();
    } catch (error) {
      this.warn(error);
    }
  }

  /**
   * The round's head write landed: its events are covered by the head, so no worker projects them
   * again. Hand the spans emitted since the last call to the tracer's `committed` (the GenAI
   * metrics): each model call is counted by the one step whose head write covered it. A worker that
   * dies before its head write never gets here, and its successor projects (and counts) those events;
   * one that dies after it and before its metrics are sent loses them: counted at most once.
   */
  committed(): void {
    const spans = this.uncommitted;
    this.uncommitted = [];
    if (spans.length === 0 || !this.tracer.committed) return;
    try {
      this.tracer.committed(spans);
    } catch (error) {
      this.warn(error);
    }
  }

  private async flush(): Promise<void> {
    const stop = new AbortController();
    const timeout = this.deps.clock.sleep(TRACE_FLUSH_MS, stop.signal).then(
      () => 'timeout' as const,
      () => 'stopped' as const,
    );
    try {
      if ((await Promise.race([this.tracer.flush().then(() => 'sent' as const), timeout])) === 'timeout') {
        this.deps.logger?.warn('spans not sent in time: the step goes on', { ...this.run, waitedMs: TRACE_FLUSH_MS });
      }
    } finally {
      stop.abort(SENT);
    }
  }

  /**
   * The part of the log before this step that it needs: events that opened the spans it may close
   * (fed without emitting), and events a dead step wrote after the last projection (emitted).
   * Nothing is read in the usual step, which opens and closes its own spans.
   */
  private async recovered(): Promise<TraceSpan[]> {
    const l = this.loadedRun;
    if (!l || !this.projector) return [];
    const tail = l.loadedSeq > l.projectedSeq ? await this.read(l.projectedSeq, l.loadedSeq) : [];
    // What the dead step closed may have been opened before the last projection: read from there too.
    let from = l.openFrom;
    for (const e of tail) {
      const call = 'callId' in e && e.callId ? l.state.calls[e.callId] : undefined;
      if (call && e.type !== 'approval_decided') from = Math.min(from, call.modelSeq + 1);
      if (e.type === 'approval_decided' && call?.approval) from = Math.min(from, call.approval.requestedSeq);
      const op = 'op' in e ? l.state.workflow?.ops[e.op - 1] : undefined;
      if (op) from = Math.min(from, op.seq);
    }
    if (from <= l.projectedSeq) this.projector.feed(await this.read(from - 1, l.projectedSeq), false);
    return this.projector.feed(tail, true, this.epoch);
  }

  private async read(afterSeq: number, untilSeq: number): Promise<RunEvent[]> {
    const events: RunEvent[] = [];
    let after = afterSeq;
    while (after < untilSeq) {
      const page = await this.deps.log.read(this.run, { afterSeq: after, limit: untilSeq - after });
      for (const raw of page.events) {
        const event = parseEvent(raw);
        if (event.seq <= untilSeq) events.push(event);
      }
      if (page.nextAfterSeq === undefined) break;
      after = page.nextAfterSeq;
    }
    return events;
  }

  private stepSpan(outcome: string): TraceSpan {
    return {
      traceId: this.traceId,
      spanId: this.stepId,
      parentSpanId: rootSpanIdOf(this.run),
      name: 'logbook.step',
      kind: 'internal',
      start: this.claimedAt,
      end: Math.max(this.claimedAt, this.deps.clock.now()),
      attributes: {
        'logbook.tenant': this.run.tenant,
        'logbook.run.id': this.run.runId,
        'logbook.step.epoch': this.epoch,
        'logbook.step.outcome': outcome,
        'logbook.step.appended': this.pending.length,
        ...(this.loadedRun ? { 'logbook.step.from_seq': this.loadedRun.loadedSeq } : {}),
        ...Object.fromEntries(this.phases.map((p) => [`logbook.step.${p.name}_ms`, p.end - p.start])),
      },
      events: this.phases.map((p) => ({ name: `logbook.${p.name}`, at: p.end, attributes: { 'logbook.phase.duration_ms': p.end - p.start } })),
      status:
        outcome === 'fenced' || outcome === 'lease_lost' || outcome === 'corrupt' || outcome === 'poisoned'
          ? { code: 'error', message: outcome }
          : { code: 'ok' },
    };
  }

  private phaseSpan(p: { name: StepPhase; start: number; end: number; round: number }): TraceSpan {
    return {
      traceId: this.traceId,
      spanId: spanIdOf(this.run, 'phase', this.epoch, p.name, p.round),
      parentSpanId: this.stepId,
      name: `logbook.${p.name}`,
      kind: 'internal',
      start: p.start,
      end: Math.max(p.start, p.end),
      attributes: { 'logbook.step.epoch': this.epoch, ...(p.round > 1 ? { 'logbook.step.round': p.round } : {}) },
    };
  }

  private warn(error: unknown): void {
    if (this.warned) return;
    this.warned = true;
    this.deps.logger?.warn('tracing failed (the step goes on)', { ...this.run, error: String(error) });
  }
}
