import { inlineText, type Body } from '../../core/body.js';
import { reservationOf, TERMINAL_EVENTS, type EventOf, type RunEvent } from '../../core/events.js';
import type { CallState, UsageState } from '../../core/state.js';
import type { OpState } from '../../core/workflow-state.js';
import type { Policy } from '../../core/event-base.js';
import { opCallId, type OpKind, type OpWait } from '../../core/workflow-events.js';
import { idempotencyKey, type RunRef } from '../../core/run-ref.js';
import { TRACE_PAYLOAD_MAX_CHARS } from '../../core/limits.js';
import { unhandled } from '../../core/unhandled.js';
import { GEN_AI, rootSpanIdOf, spanIdOf, stepSpanIdOf, traceIdOf, type TraceSpan } from './trace-span.js';

/** What a tool call's span says happened to its attempt. */
export type ToolOutcome = 'ok' | 'error' | 'unknown' | 'verified' | 'escalated';

type Opened = { seq: number; at: number; epoch: number };
type OpenModel = Opened & { step: number; purpose?: string };
type OpenCall = Opened & { attempt: number; notAfter: number; wait?: EventOf<'tool_started'>['wait']; verify?: string };
type SpanEvent = NonNullable<TraceSpan['events']>[number];
/** A workflow operation with a span: its first event to its result (one span an operation, whatever its attempts). */
type OpenOp = Opened & {
  op: number;
  kind: OpKind;
  name: string;
  attempt: number;
  policy?: Policy;
  notAfter?: number;
  wait?: OpWait;
  verify?: string;
  events: SpanEvent[];
};
/** Recorded values (ctx.now, random, uuid) are one op_result each, with no duration: no span. */
const VALUE_KINDS: ReadonlySet<OpKind> = new Set(['now', 'random', 'uuid']);

export interface ProjectorOptions {
  run: RunRef;
  started: EventOf<'run_started'>;
  /** The run's calls as folded (names and arguments of the calls a span is about). */
  calls: () => Record<string, CallState>;
  /** Put prompt and tool payloads on spans (as logged: redacted, offloaded bodies by reference). */
  payloads: boolean;
  /** The run's usage as folded (a child run's spend rolled in): the root span's totals. */
  usage?: () => UsageState;
  /** The live step (lease epoch) and when it claimed the run: where a `rerun` step, which writes no marker, starts. */
  step?: { epoch: number; start: number };
}

/**
 * The run's spans as a projection of its log: fed the events in seq order, it emits each span with
 * the event that closes it (a model_response closes its model_started, a tool_result its
 * tool_started, a terminal event the run), with ids that are a hash of the run and the opening
 * event. Feeding the same events again gives the same spans, which is what makes a span re-sent
 * after a crash the same span; every span's parent is the step span of the lease epoch that
 * opened it (events carry their writer's epoch) or the run's root, so none is an orphan.
 *
 * Events fed with `emit: false` only open spans (what came before the events a step emits for).
 */
export class SpanProjector {
  private model?: OpenModel;
  private readonly tools = new Map<string, OpenCall>();
  private readonly approvals = new Map<string, Opened>();
  private readonly ops = new Map<number, OpenOp>();
  /** The first event seen of each lease epoch: where a rerun step of a step not projected live starts. */
  private readonly epochStarts = new Map<number, number>();
  private readonly traceId: string;
  private readonly root: string;

  constructor(private readonly o: ProjectorOptions) {
    this.traceId = traceIdOf(o.run);
    this.root = rootSpanIdOf(o.run);
  }

  /**
   * Feed events in seq order. Returns the spans they close when `emit`, plus, for `recoveredFrom`
   * epochs (steps whose worker died before emitting), a step span rebuilt from their events.
   */
  feed(events: readonly RunEvent[], emit: boolean, liveEpoch?: number): TraceSpan[] {
    const out: TraceSpan[] = [];
    const recovered = new Map<number, { start: number; end: number; events: number }>();
    for (const e of events) {
      const spans = this.apply(e);
      if (!emit) continue;
      out.push(...spans);
      const epoch = e.by.epoch;
      if (epoch > 0 && epoch !== liveEpoch) {
        const r = recovered.get(epoch);
        if (r) {
          r.end = Math.max(r.end, e.at);
          r.events++;
        } else recovered.set(epoch, { start: e.at, end: e.at, events: 1 });
      }
    }
    for (const [epoch, r] of recovered) out.push(this.recoveredStep(epoch, r));
    return out;
  }

  /** The parent of a span opened by an event of `epoch`: that step, or the run for events made outside a step. */
  /**
   * Open waits (sleep, signal, child, approval) as the folded state holds them, so a step that
   * closes one needs no read of the log back to where it opened: in a fan-out of n children every
   * child's result would otherwise re-read the ~n events since the first one started. A wait has
   * nothing between its start and its result that its span shows, so the seed is exact; steps
   * (attempts, retries, verify) are still opened from their events.
   */
  seedWaits(ops: readonly OpState[]): void {
    for (const op of ops) {
      if (!op.wait || op.status === 'done' || op.startedBy === undefined || this.ops.has(op.op)) continue;
      this.ops.set(op.op, {
        seq: op.seq,
        at: op.startedAt ?? 0,
        epoch: op.startedBy,
        op: op.op,
        kind: op.kind,
        name: op.name,
        attempt: op.attempt,
        events: [],
        wait: op.wait,
        ...(op.notAfter !== undefined ? { notAfter: op.notAfter } : {}),
      });
    }
  }

  private parentOf(epoch: number): string {
    return epoch > 0 ? stepSpanIdOf(this.o.run, epoch) : this.root;
  }

  private apply(e: RunEvent): TraceSpan[] {
    const spans: TraceSpan[] = [];
    const push = (s: TraceSpan | undefined) => s && spans.push(s);
    if (!this.epochStarts.has(e.by.epoch)) this.epochStarts.set(e.by.epoch, e.at);
    switch (e.type) {
      case 'model_response':
      case 'model_failed':
        push(this.closeModel(e));
        break;
      case 'model_started':
        break;
      case 'tool_started': {
        const prior = this.tools.get(e.callId);
        // An earlier attempt with no result: its worker died or lost the run (outcome unknown).
        if (prior) push(this.closeTool(e.callId, prior, e.at, 'unknown'));
        this.tools.set(e.callId, { seq: e.seq, at: e.at, epoch: e.by.epoch, attempt: e.attempt, notAfter: e.notAfter, ...(e.wait ? { wait: e.wait } : {}) });
        break;
      }
      case 'tool_verified': {
        const open = this.tools.get(e.callId);
        if (open) open.verify = e.status;
        break;
      }
      case 'tool_result': {
        const open = this.tools.get(e.callId);
        if (open) push(this.closeTool(e.callId, open, e.at, toolOutcome(e), e));
        break;
      }
      case 'attention_required': {
        const open = e.callId ? this.tools.get(e.callId) : undefined;
        if (e.callId && open) push(this.closeTool(e.callId, open, e.at, 'escalated'));
        const op = this.opOfCall(e.callId);
        // An operation left to a person stays open: a person's answer is its op_result (source human).
        if (op) op.events.push({ name: 'logbook.op.escalated', at: e.at, attributes: { 'logbook.attention.reason': e.reason } });
        break;
      }
      case 'op_started': {
        const prior = this.ops.get(e.op);
        if (prior?.seq === e.seq) break; // seeded from the folded state, and now read again (a recovery)
        if (prior) {
          // A later attempt (the earlier one's worker died, or it was retried): the same operation's span.
          prior.attempt = e.attempt;
          prior.notAfter = e.notAfter;
          delete prior.verify;
          prior.events.push({ name: 'logbook.op.attempt', at: e.at, attributes: { 'logbook.op.attempt': e.attempt } });
        } else {
          this.ops.set(e.op, {
            seq: e.seq,
            at: e.at,
            epoch: e.by.epoch,
            op: e.op,
            kind: e.kind,
            name: e.name,
            attempt: e.attempt,
            notAfter: e.notAfter,
            events: [],
            ...(e.policy ? { policy: e.policy } : {}),
            ...(e.wait ? { wait: e.wait } : {}),
          });
        }
        break;
      }
      case 'op_retry': {
        const open = this.ops.get(e.op) ?? this.openRerun(e);
        open.attempt = e.attempt;
        open.events.push({
          name: 'logbook.op.retry',
          at: e.at,
          attributes: { 'logbook.op.attempt': e.attempt, 'error.type': e.error.code, 'logbook.op.retry_at': e.retryAt },
        });
        break;
      }
      case 'op_verified': {
        const open = this.ops.get(e.op);
        if (open) {
          open.verify = e.status;
          open.events.push({ name: 'logbook.op.verified', at: e.at, attributes: { 'logbook.op.verify': e.status } });
        }
        break;
      }
      case 'op_result':
        if (!VALUE_KINDS.has(e.kind)) push(this.closeOp(this.ops.get(e.op) ?? this.openRerun(e), e.at, e));
        break;
      case 'approval_requested':
        this.approvals.set(e.callId, { seq: e.seq, at: e.at, epoch: e.by.epoch });
        break;
      case 'approval_decided': {
        const open = this.approvals.get(e.callId);
        if (open) push(this.closeApproval(e, open));
        break;
      }
      // No span of their own (the run's and steps' spans come from feed and the terminal events).
      case 'run_started':
      case 'attention_resolved':
      case 'cancel_requested':
      case 'run_completed':
      case 'run_failed':
      case 'run_cancelled':
      case 'user_message':
        break;
      default:
        unhandled(e, 'event type');
    }
    // A model reservation (model_started, or carried by a tool_result) opens a chat span; one
    // still open had no answer: the worker that made it died or lost the run.
    const reservation = reservationOf(e);
    if (reservation) {
      if (this.model) push(this.closeModel(undefined, e.at));
      this.model = {
        seq: e.seq,
        at: e.at,
        epoch: e.by.epoch,
        step: reservation.step,
        ...(e.type === 'model_started' && e.purpose ? { purpose: e.purpose } : {}),
      };
    }
    if (TERMINAL_EVENTS.has(e.type)) {
      if (this.model) push(this.closeModel(undefined, e.at));
      for (const [callId, open] of this.tools) push(this.closeTool(callId, open, e.at, 'unknown'));
      for (const open of this.ops.values()) push(this.closeOp(open, e.at));
      push(this.rootSpan(e));
    }
    return spans;
  }

  private base(spanId: string, parentSpanId: string, name: string, start: number, end: number): TraceSpan {
    return { traceId: this.traceId, spanId, parentSpanId, name, kind: 'internal', start, end: Math.max(start, end), attributes: {} };
  }

  private closeModel(e: EventOf<'model_response'> | EventOf<'model_failed'> | undefined, abandonedAt?: number): TraceSpan | undefined {
    const open = this.model;
    if (!open) return undefined;
    this.model = undefined;
    const id = this.o.started.model?.id ?? 'none';
    const span = this.base(
      spanIdOf(this.o.run, 'model', open.seq),
      this.parentOf(open.epoch),
      `chat ${modelName(id)}`,
      open.at,
      e?.at ?? abandonedAt ?? open.at,
    );
    span.kind = 'client';
    span.attributes = {
      [GEN_AI.operation]: 'chat',
      [GEN_AI.provider]: providerOf(id),
      [GEN_AI.requestModel]: modelName(id),
      [GEN_AI.conversationId]: this.o.run.runId,
      'logbook.model.id': id,
      'logbook.model.step': open.step,
      'logbook.seq': open.seq,
      ...(open.purpose ? { 'logbook.model.purpose': open.purpose } : {}),
    };
    if (e?.type === 'model_response') {
      Object.assign(span.attributes, {
        [GEN_AI.inputTokens]: e.usage.inputTokens,
        [GEN_AI.outputTokens]: e.usage.outputTokens,
        [GEN_AI.finishReasons]: [e.stopReason],
        'logbook.cost_usd': e.costUsd,
        'logbook.model.tool_calls': e.calls.length,
      });
      if (this.o.payloads) {
        const output = { text: e.text ? bodyText(e.text) : null, calls: e.calls.map((c) => ({ id: c.callId, name: c.name, arguments: bodyText(c.args) })) };
        span.attributes[GEN_AI.outputMessages] = clip(JSON.stringify(output));
      }
      span.status = { code: 'ok' };
    } else if (e?.type === 'model_failed') {
      Object.assign(span.attributes, { 'error.type': e.code, 'logbook.model.retryable': e.retryable });
      span.status = { code: 'error', message: e.code };
    } else {
      span.attributes['error.type'] = 'no_response';
      span.status = { code: 'error', message: 'no response: the worker died or lost the run during the call' };
    }
    return span;
  }

  private closeTool(callId: string, open: OpenCall, at: number, outcome: ToolOutcome, result?: EventOf<'tool_result'>): TraceSpan {
    this.tools.delete(callId);
    const call = this.o.calls()[callId];
    const name = call?.name ?? 'tool';
    const pinned = this.o.started.tools.find((t) => t.name === name);
    const id = spanIdOf(this.o.run, 'tool', callId, open.attempt);
    // Without a result of its own the attempt's end is not in the log: it ran at most to its deadline.
    const end = result ? at : Math.min(at, open.notAfter);
    const wait = open.wait;
    const spanName =
      wait?.kind === 'child'
        ? `invoke_agent ${pinned?.wait?.kind === 'child' ? pinned.wait.agent.name : name}`
        : wait
          ? `wait ${name}`
          : `execute_tool ${name}`;
    const span = this.base(id, this.parentOf(open.epoch), spanName, open.at, end);
    span.attributes = {
      [GEN_AI.operation]: wait?.kind === 'child' ? 'invoke_agent' : 'execute_tool',
      [GEN_AI.toolName]: name,
      [GEN_AI.toolCallId]: callId,
      [GEN_AI.toolType]: 'function',
      'logbook.tool.policy': pinned?.policy ?? 'unknown',
      'logbook.tool.attempt': open.attempt,
      'logbook.tool.idempotency_key': idempotencyKey(this.o.run, callId),
      'logbook.tool.outcome': outcome,
      'logbook.seq': open.seq,
      ...(open.verify ? { 'logbook.tool.verify': open.verify } : {}),
      ...(result ? { 'logbook.tool.source': result.source } : {}),
      ...(result?.errorCode ? { 'error.type': result.errorCode } : {}),
    };
    if (wait) {
      span.attributes['logbook.wait.kind'] = wait.kind;
      if (wait.kind === 'signal') span.attributes['logbook.wait.signal'] = wait.signal;
      if (wait.kind === 'child') {
        const child = { tenant: this.o.run.tenant, runId: wait.runId };
        span.kind = 'client';
        span.attributes[GEN_AI.agentName] = span.name.slice('invoke_agent '.length);
        span.attributes['logbook.child.run_id'] = wait.runId;
        span.links = [{ traceId: traceIdOf(child), spanId: rootSpanIdOf(child), attributes: { 'logbook.link': 'child_run' } }];
      }
    }
    if (this.o.payloads) {
      if (call) span.attributes[GEN_AI.toolCallArguments] = clip(bodyText(call.args));
      if (result) span.attributes[GEN_AI.toolCallResult] = clip(bodyText(result.output));
    }
    span.status = outcome === 'error' || outcome === 'unknown' ? { code: 'error', message: outcome } : { code: 'ok' };
    return span;
  }

  private closeApproval(e: EventOf<'approval_decided'>, open: Opened): TraceSpan {
    this.approvals.delete(e.callId);
    const name = this.o.calls()[e.callId]?.name ?? 'tool';
    const span = this.base(spanIdOf(this.o.run, 'approval', open.seq), this.parentOf(open.epoch), `approval ${name}`, open.at, e.at);
    span.attributes = { [GEN_AI.toolName]: name, [GEN_AI.toolCallId]: e.callId, 'logbook.approval.decision': e.decision, 'logbook.seq': open.seq };
    span.status = { code: 'ok' };
    return span;
  }

  private opOfCall(callId: string | undefined): OpenOp | undefined {
    for (const open of callId ? this.ops.values() : []) if (opCallId(open.op) === callId) return open;
    return undefined;
  }

  /**
   * An operation whose first event is a result or a retry: a `rerun` step (no started marker), or
   * one whose marker this projection did not see. It started no later than the step that wrote it:
   * the live step's claim, else the first event of that epoch seen here.
   */
  private openRerun(e: EventOf<'op_result'> | EventOf<'op_retry'>): OpenOp {
    const epoch = e.by.epoch;
    const start = this.o.step?.epoch === epoch ? this.o.step.start : (this.epochStarts.get(epoch) ?? e.at);
    const open: OpenOp = { seq: e.seq, at: Math.min(start, e.at), epoch, op: e.op, kind: e.kind, name: e.name, attempt: e.attempt ?? 1, events: [] };
    if (e.kind === 'step') open.policy = 'rerun';
    this.ops.set(e.op, open);
    return open;
  }

  /**
   * The span of one workflow operation, closed by its result or, with none, by the run's end (a
   * crash or a cancel left it open: its outcome is unknown, and it ran at most to its notAfter).
   */
  private closeOp(open: OpenOp, at: number, result?: EventOf<'op_result'>): TraceSpan {
    this.ops.delete(open.op);
    const wait = open.wait;
    const end = result ? at : Math.min(at, open.notAfter ?? at);
    const span = this.base(spanIdOf(this.o.run, 'op', open.op), this.parentOf(open.epoch), opSpanName(open.kind, open.name), open.at, end);
    const outcome = result ? (result.ok ? 'ok' : 'error') : 'unknown';
    span.attributes = {
      'logbook.op.number': open.op,
      'logbook.op.call_id': opCallId(open.op),
      'logbook.op.kind': open.kind,
      'logbook.op.name': open.name,
      'logbook.op.attempt': result?.attempt ?? open.attempt,
      'logbook.op.outcome': outcome,
      'logbook.seq': open.seq,
      ...(open.policy ? { 'logbook.op.policy': open.policy } : {}),
      ...(open.verify ? { 'logbook.op.verify': open.verify } : {}),
      ...(result ? { 'logbook.op.source': result.source } : {}),
      ...(result?.errorCode ? { 'error.type': result.errorCode } : {}),
      ...(result?.sentBy ? { 'logbook.op.sent_by': result.sentBy } : {}),
    };
    if (open.policy === 'idempotency_key') span.attributes['logbook.op.idempotency_key'] = idempotencyKey(this.o.run, opCallId(open.op));
    if (wait) {
      span.attributes['logbook.wait.kind'] = wait.kind;
      if (wait.kind === 'signal') span.attributes['logbook.wait.signal'] = wait.signal;
      if (wait.until !== undefined) span.attributes['logbook.wait.until'] = wait.until;
      if (wait.kind === 'child') {
        const child = { tenant: this.o.run.tenant, runId: wait.runId };
        span.kind = 'client';
        span.attributes['logbook.child.run_id'] = wait.runId;
        span.attributes['logbook.child.kind'] = wait.definition.kind;
        span.attributes['logbook.child.version'] = wait.definition.version;
        if (wait.definition.kind === 'agent') {
          span.attributes[GEN_AI.operation] = 'invoke_agent';
          span.attributes[GEN_AI.agentName] = wait.definition.name;
        }
        span.links = [{ traceId: traceIdOf(child), spanId: rootSpanIdOf(child), attributes: { 'logbook.link': 'child_run' } }];
      }
    }
    if (result?.childUsage) {
      // The child's own trace has its chat spans: not gen_ai.usage here, which a backend would count twice.
      span.attributes['logbook.child.input_tokens'] = result.childUsage.inputTokens;
      span.attributes['logbook.child.output_tokens'] = result.childUsage.outputTokens;
      span.attributes['logbook.child.cost_usd'] = result.childUsage.costUsd;
    }
    if (this.o.payloads) {
      const input = wait?.kind === 'child' ? wait.input : wait?.kind === 'approval' ? wait.args : undefined;
      if (input) span.attributes['logbook.op.input'] = clip(bodyText(input));
      if (result) span.attributes['logbook.op.output'] = clip(bodyText(result.output));
    }
    if (open.events.length > 0) span.events = open.events;
    span.status = outcome === 'ok' ? { code: 'ok' } : { code: 'error', message: result?.errorCode ?? outcome };
    return span;
  }

  private rootSpan(e: RunEvent): TraceSpan {
    const s = this.o.started;
    const span: TraceSpan = {
      traceId: this.traceId,
      spanId: this.root,
      name: `invoke_agent ${s.agent.name}`,
      kind: 'internal',
      start: s.at,
      end: Math.max(s.at, e.at),
      attributes: {
        [GEN_AI.operation]: 'invoke_agent',
        [GEN_AI.agentName]: s.agent.name,
        [GEN_AI.agentVersion]: s.agent.version,
        [GEN_AI.agentId]: `${s.agent.name}@${s.agent.version}`,
        [GEN_AI.conversationId]: this.o.run.runId,
        ...(s.model ? { [GEN_AI.provider]: providerOf(s.model.id), [GEN_AI.requestModel]: modelName(s.model.id) } : {}),
        'logbook.tenant': this.o.run.tenant,
        'logbook.run.id': this.o.run.runId,
        'logbook.run.outcome': e.type.replace('run_', ''),
        'logbook.run.kind': s.workflow ? 'workflow' : 'agent',
        'logbook.seq': e.seq,
      },
      status: e.type === 'run_completed' ? { code: 'ok' } : { code: 'error', message: e.type === 'run_failed' ? e.code : 'cancelled' },
    };
    const usage = this.o.usage?.();
    if (usage) {
      // What the run spent, its child runs' spend included (the fold rolls each child's in).
      Object.assign(span.attributes, {
        [GEN_AI.inputTokens]: usage.inputTokens,
        [GEN_AI.outputTokens]: usage.outputTokens,
        'logbook.cost_usd': usage.costUsd,
        'logbook.run.model_steps': usage.steps,
      });
    }
    if (s.parent) {
      const parent = { tenant: this.o.run.tenant, runId: s.parent.runId };
      span.links = [{ traceId: traceIdOf(parent), spanId: rootSpanIdOf(parent), attributes: { 'logbook.link': 'parent_run' } }];
    }
    return span;
  }

  private recoveredStep(epoch: number, r: { start: number; end: number; events: number }): TraceSpan {
    const span = this.base(stepSpanIdOf(this.o.run, epoch), this.root, 'logbook.step', r.start, r.end);
    span.attributes = { 'logbook.step.epoch': epoch, 'logbook.step.recovered': true, 'logbook.step.appended': r.events, 'logbook.run.id': this.o.run.runId };
    span.status = { code: 'error', message: 'the worker stopped before it sent its spans: rebuilt from the log' };
    return span;
  }
}

/** `logbook.workflow.step charge`, `logbook.workflow.signal reviewed`; a sleep, whose name is its kind, `logbook.workflow.sleep`. */
export function opSpanName(kind: OpKind, name: string): string {
  return kind === name ? `logbook.workflow.${kind}` : `logbook.workflow.${kind} ${name}`;
}

function toolOutcome(e: EventOf<'tool_result'>): ToolOutcome {
  if (e.source === 'verify') return 'verified';
  if (e.source === 'human') return 'escalated';
  return e.ok ? 'ok' : 'error';
}

/** `bedrock:anthropic.claude-…` → `aws.bedrock`, as gen_ai.provider.name spells the providers it knows. */
export function providerOf(modelId: string): string {
  const prefix = modelId.includes(':') ? modelId.slice(0, modelId.indexOf(':')) : modelId;
  if (prefix === 'bedrock') return 'aws.bedrock';
  if (prefix === 'openai') return 'openai';
  return `logbook.${prefix}`;
}

function modelName(modelId: string): string {
  const i = modelId.indexOf(':');
  return i < 0 ? modelId : modelId.slice(i + 1);
}

/** A body as it is logged (already redacted); an offloaded one by its summary and key, never fetched. */
function bodyText(body: Body): string {
  return body.kind === 'inline' ? inlineText(body) : `[offloaded ${body.size} bytes: ${body.key}] ${body.summary}`;
}

function clip(text: string): string {
  return text.length > TRACE_PAYLOAD_MAX_CHARS ? `${text.slice(0, TRACE_PAYLOAD_MAX_CHARS)}…[truncated]` : text;
}
