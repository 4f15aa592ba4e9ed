import { StopWorkError } from '../../core/errors.js';
import { opCallId, type OpKind } from '../../core/workflow-events.js';
import type { OpState } from '../../core/workflow-state.js';
import type { WorkflowDefinition } from '../../authoring/workflow-types.js';
import type { RunSession } from '../run-session.js';
import type { TurnOutcome } from '../turn-outcome.js';
import { actOnOperation, type ActResult } from './op-actions.js';
import { deliveredValue } from './op-results.js';
import type { OpRequest, OpSpec } from './op-specs.js';
import { workflowContext } from './workflow-context.js';
import type { Driver, Halt } from './driver-port.js';
import { finishWorkflow, nondeterministic, awaitsOutside } from './workflow-end.js';

/** Real time the code gets to move on when it awaits something that is not an operation. */
const OUTSIDE_AWAIT_GRACE_ROUNDS = 20;
const OUTSIDE_AWAIT_GRACE_ROUND_MS = 50;

/** Let the workflow's code run until it waits on operations again: every microtask it queued runs first. */
const drain = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The replay driver: runs a workflow's `run(ctx, input)` from the top over its folded log, and
 * on, live, from the first operation the log has no result for.
 *
 * - Operations are numbered in the order the code asks for them. Asking at n for another kind or
 *   name than the log holds at n is non-determinism: the run parks (workflow-end.ts) and nothing
 *   is acted on.
 * - Results reach the code one at a time, in the order the log holds them (state.workflow
 *   .resultOrder), with the code run to quiescence between two (drain): so concurrent operations
 *   (ctx.all, ctx.map) lead the code to ask for the same next operations in the same order live
 *   and on every replay. A live result is appended first, then delivered the same way: the code
 *   never acts on what the log does not hold (write before you act).
 * - Only once every recorded result is delivered does the driver act on what the code waits for
 *   (op-actions.ts: start a step, a sleep, a child; apply a policy; complete a due wait).
 * - The step ends when the code is quiescent (it waits only on operations that complete from
 *   outside or later: the head's wakeAt or an inbox item wakes the run, and the next step replays),
 *   when time runs short (StopWorkError: the next tick carries on), or when the code settles.
 *
 * One driver per step (kept on the session): after the step ingests inbox items it is pumped
 * again and delivers the new results to the same, still suspended, code instead of replaying it.
 */
export class WorkflowDriver implements Driver {
  private nextOp = 1;
  private readonly requests = new Map<number, OpRequest>();
  /** How many of the log's results (resultOrder) the code has been given. */
  private delivered = 0;
  private inflight = 0;
  private wakeUp: (() => void) | undefined;
  private settled: { ok: true; value: unknown } | { ok: false; error: unknown } | undefined;
  private halt: Halt | undefined;
  /** Set once the driver is done with: a late request of abandoned code is never served. */
  closed = false;

  constructor(
    readonly session: RunSession,
    readonly definition: WorkflowDefinition,
  ) {}

  /** Start the code (once per driver). */
  start(input: unknown): void {
    const started = this.session.state.started;
    const ctx = workflowContext(this, { tenant: started.tenant, runId: started.runId, name: started.agent.name, version: started.agent.version });
    Promise.resolve()
      .then(() => this.definition.run(ctx, input as never))
      .then(
        (value) => (this.settled = { ok: true, value }),
        (error: unknown) => (this.settled = { ok: false, error }),
      )
      .finally(() => this.poke());
  }

  /** ctx calls land here: the next operation number, checked against the log. */
  request(kind: OpKind, name: string, spec: OpSpec): Promise<unknown> {
    if (this.closed || this.halt) return new Promise(() => undefined);
    const op = this.nextOp++;
    const logged = this.opAt(op);
    if (logged && (logged.kind !== kind || logged.name !== name)) {
      this.nondeterminism = { op, logged, asked: { kind, name } };
      this.stop({ kind: 'outcome', outcome: { kind: 'parked', reasons: [] } });
      return new Promise(() => undefined);
    }
    return new Promise((resolve, reject) => {
      this.requests.set(op, { op, kind, name, spec, resolve, reject, phase: 'new' });
      this.poke();
    });
  }

  /** Set when the code asked for something the log does not hold; the runner parks the run with it. */
  nondeterminism: { op: number; logged?: OpState; asked?: { kind: OpKind; name: string }; unasked?: OpState } | undefined;

  /**
   * Drive the code until the step must end. Phases, each pass: 1. deliver the next recorded
   * result (in log order); 2. once the code has settled and nothing runs, end the run;
   * 3. act on operations not yet decided; 4. wait for one this worker runs; 5. quiescent: hand
   * the run to the head's wake-up or the inbox.
   */
  async pump(): Promise<TurnOutcome> {
    // Time moved and the inbox may have changed things: decide every waiting operation again.
    for (const r of this.requests.values()) if (r.phase === 'acted') r.phase = 'new';
    try {
      for (;;) {
        await drain();
        if (this.halt) return await this.halted();
        const order = this.session.state.workflow!.resultOrder;
        // 1. Results in the log's order, one at a time.
        if (this.delivered < order.length) {
          const n = order[this.delivered]!;
          const request = this.requests.get(n);
          if (!request) {
            this.nondeterminism = { op: n, unasked: this.opAt(n)! };
            this.stop({ kind: 'outcome', outcome: { kind: 'parked', reasons: [] } });
            continue;
          }
          this.delivered++;
          this.requests.delete(n);
          await this.deliver(request, this.opAt(n)!);
          continue;
        }
        // 2. The code settled: once nothing of ours runs, the run ends (or the log shows it asked less than before).
        if (this.settled) {
          if (this.inflight > 0) {
            await this.waitForWake();
            continue;
          }
          this.closed = true;
          return await finishWorkflow(this, this.settled, this.nextOp, [...this.requests.values()]);
        }
        // 3. Act on what is not decided yet, in operation order.
        const fresh = [...this.requests.values()].filter((r) => r.phase === 'new').sort((a, b) => a.op - b.op);
        if (fresh.length > 0) {
          for (const request of fresh) {
            const result = await this.act(request);
            if (result === 'stop' || this.halt) break;
          }
          continue;
        }
        // 4. Something of ours is running: wait for it.
        if (this.inflight > 0) {
          await this.waitForWake();
          continue;
        }
        // 5. Quiescent; or the code waits for something that is not an operation (given a moment).
        if (this.requests.size === 0 && (await this.outsideGrace())) continue;
        return await this.quiescent();
      }
    } catch (error) {
      this.closed = true;
      // Nothing may be left running when the step ends with an error (a fence, a lost lease).
      await this.settleInflight();
      throw error;
    }
  }

  private async act(request: OpRequest): Promise<ActResult> {
    const { session } = this;
    // A cancel seen by the heartbeat: start nothing more; the step ingests it and winds down.
    if (session.cancel.signal.aborted && !session.state.cancel) {
      this.stop({ kind: 'outcome', outcome: { kind: 'continued' } });
      return 'stop';
    }
    try {
      return await actOnOperation(this, request, this.opAt(request.op));
    } catch (error) {
      if (error instanceof StopWorkError && !session.lease.lost) {
        // Not enough time or lease left to start it: the next step does.
        this.stop({ kind: 'outcome', outcome: { kind: 'continued' } });
        return 'stop';
      }
      this.stop({ kind: 'error', error });
      return 'stop';
    }
  }

  /** Run work of this worker's (a step's function, a short wait) beside the pump; it pokes when done. */
  track(work: () => Promise<void>): void {
    this.inflight++;
    work()
      .catch((error: unknown) => this.stop({ kind: 'error', error }))
      .finally(() => {
        this.inflight--;
        this.poke();
      });
  }

  /** The operation as the log holds it now (undefined: no event of it yet). */
  opAt(op: number): OpState | undefined {
    return this.session.state.workflow!.ops[op - 1] ?? undefined;
  }

  stop(halt: Halt): void {
    this.halt ??= halt;
    this.poke();
  }

  poke(): void {
    const wake = this.wakeUp;
    this.wakeUp = undefined;
    wake?.();
  }

  private waitForWake(): Promise<void> {
    return new Promise((resolve) => (this.wakeUp = resolve));
  }

  private async settleInflight(): Promise<void> {
    while (this.inflight > 0) await this.waitForWake();
  }

  private async deliver(request: OpRequest, op: OpState): Promise<void> {
    const outcome = await deliveredValue(this.session.deps.codec, request, op);
    if (outcome.ok) request.resolve(outcome.value);
    else request.reject(outcome.error);
  }

  private async halted(): Promise<TurnOutcome> {
    this.closed = true;
    await this.settleInflight();
    const halt = this.halt!;
    if (halt.kind === 'error') throw halt.error;
    if (this.nondeterminism) return nondeterministic(this, this.nondeterminism);
    if (halt.kind === 'fail') {
      await this.session.append({ type: 'run_failed', code: halt.code, message: halt.message });
      return { kind: 'ended' };
    }
    return halt.outcome;
  }

  /**
   * The code neither settled nor asked for an operation: it awaits something of its own (a timer,
   * I/O, a promise it made). Give it a moment of real time (a dynamic import, say); true when it
   * moved on. Awaiting anything but operations is not allowed (workflow-end.ts fails the run).
   */
  private async outsideGrace(): Promise<boolean> {
    for (let i = 0; i < OUTSIDE_AWAIT_GRACE_ROUNDS; i++) {
      await new Promise((resolve) => setTimeout(resolve, OUTSIDE_AWAIT_GRACE_ROUND_MS));
      if (this.settled || this.requests.size > 0 || this.halt) return true;
    }
    return false;
  }

  /** The code waits only on what completes from outside or later; say until when, and why. */
  private async quiescent(): Promise<TurnOutcome> {
    const waiting = [...this.requests.values()];
    if (waiting.length === 0) return awaitsOutside(this, OUTSIDE_AWAIT_GRACE_ROUNDS * OUTSIDE_AWAIT_GRACE_ROUND_MS);
    const times = waiting.map((r) => r.until).filter((t): t is number => t !== undefined);
    const blocked = waiting.filter((r) => r.blocked);
    if (times.length > 0) {
      return { kind: 'waiting', until: Math.min(...times), reason: `operations ${waiting.map((r) => opCallId(r.op)).join(', ')} wait` };
    }
    if (blocked.length === waiting.length) {
      return { kind: 'parked', reasons: blocked.map((r) => `${opCallId(r.op)} (${r.kind} "${r.name}") waits for a person`) };
    }
    return { kind: 'waiting', reason: `operations ${waiting.map((r) => opCallId(r.op)).join(', ')} wait for a signal, a person or a child run` };
  }
}
