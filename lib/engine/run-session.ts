import { AppendConflictError } from '../core/errors.js';
import { modelReservationSchema, parseEvent, type EventDraft, type ModelReservation, type RunEvent } from '../core/events.js';
import { applyEvent, previewToolResult } from '../core/fold.js';
import type { RunState } from '../core/state.js';
import type { RunRef } from '../core/run-ref.js';
import type { EngineDeps } from './engine.js';
import type { LeaseKeeper } from './lease-keeper.js';
import type { StepTrace } from './tracing/step-trace.js';

/**
 * One worker's hold on one run. `append` is the only way state changes: it encodes the draft
 * (redact, offload, hash), writes seq = lastSeq + 1 conditionally, and folds exactly the event it
 * wrote. A rejected append fences the session: it throws and every later append throws too.
 */
export class RunSession {
  appended = 0;
  fenced = false;
  /** A call ignored its abort signal and may still be running: the process must exit. */
  dangling = false;
  /** Aborted when a cancel arrives while calls are in flight. */
  readonly cancel = new AbortController();
  /** Called once, after the first successful append of this step (progress was made). */
  onFirstAppend?: () => Promise<void>;
  /**
   * Set while tools run: given the state a tool_result would leave, the next model call's
   * reservation if that result should carry it, else undefined (carried-reservation.ts).
   */
  carryReservation?: (after: RunState) => ModelReservation | undefined;
  /** The last tool_result this session appended with a carried reservation. */
  carried?: { seq: number; reservation: ModelReservation };
  /** This step's spans, when tracing is on: every appended event is projected into them. */
  trace?: StepTrace;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly deps: EngineDeps,
    readonly run: RunRef,
    public state: RunState,
    readonly writer: { epoch: number; nonce: string },
    readonly lease: LeaseKeeper,
    /** Epoch ms by which the invocation must be done. */
    readonly deadlineAt: number,
    readonly owner: string,
  ) {}

  /** Appends are serialized: concurrent tool completions each get the next seq in turn. */
  append(draft: EventDraft): Promise<RunEvent> {
    const next = this.chain.then(() => this.appendNow(draft));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async appendNow(draft: EventDraft): Promise<RunEvent> {
    if (this.fenced) throw new AppendConflictError(this.run, this.state.lastSeq + 1);
    const { codec, checkpoints, clock } = this.deps;
    const encoded = await codec.encodeDraft(this.run, draft, checkpoints);
    const candidate = { ...encoded, v: 1, seq: this.state.lastSeq + 1, at: clock.now(), by: this.writer };
    // Validate exactly as a reader will: the live loop never holds what replay could not rebuild.
    let event = parseEvent(candidate);
    if (event.type === 'tool_result' && !event.reservation && this.carryReservation) {
      // Decided on the state this very result leaves (its encoded, redacted form), as decide would next.
      const reservation = this.carryReservation(previewToolResult(this.state, event));
      // Only the added field needs validating: the rest was parsed above.
      if (reservation) event = { ...event, reservation: modelReservationSchema.parse(reservation) };
    }
    await checkpoints?.at('before-append', `${event.type}#${event.seq}`);
    try {
      await this.deps.log.append(this.run, event, { horizon: this.state.started.expiresAt });
    } catch (error) {
      // Any failed append stops this session: a transient error may hide a write that landed, and
      // only a fresh read of the log can tell. The next step resumes from what is really there.
      this.fenced = true;
      if (error instanceof AppendConflictError) this.deps.metrics?.count('AppendConflicts');
      throw error;
    }
    try {
      // The session owns its state: fold in place, so a long run costs O(1) per append.
      applyEvent(this.state, event);
    } catch (error) {
      this.fenced = true;
      this.deps.loader.forget(this.run);
      throw error;
    }
    this.trace?.saw(event);
    if (event.type === 'tool_result' && event.reservation) this.carried = { seq: event.seq, reservation: event.reservation };
    this.appended++;
    this.deps.loader.remember(this.run, this.state, this.writer.epoch);
    if (this.appended === 1 && this.onFirstAppend) await this.onFirstAppend();
    await checkpoints?.appended?.(this.run, this.state);
    await checkpoints?.at('after-append', `${event.type}#${event.seq}`);
    return event;
  }
}
