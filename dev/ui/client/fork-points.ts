import { plural } from './format.js';
import type { LogEvent } from './types.js';

/**
 * Where a run can be forked, read from its log: the API forks at a turn boundary only (seq 1, or a
 * seq after which every call of the model's last turn has its result, no model call is open, nothing
 * waits for a person and no cancel is pending: lib/engine/fork.ts `checkBoundary`). Every other
 * point is offered disabled with the reason the API would give. A workflow run forks at seq 1 or
 * where every operation has its result (lib/engine/workflow/workflow-fork.ts). test/unit/ui/fork-points.test.ts
 * holds this to the API's answer at every seq of real logs. No DOM here.
 */
export interface ForkPoint {
  seq: number;
  type: string;
  ok: boolean;
  /** Why a fork here is refused (absent when ok). */
  reason?: string;
  /** For a boundary: what the fork starts from ("after the model's turn 2", "the start"). */
  label: string;
}

interface State {
  outcome?: string;
  openModel?: number;
  /** The open model call's reservation was carried by a tool_result (at openModel). */
  carried?: boolean;
  turnCalls: string[];
  started: Set<string>;
  done: Set<string>;
  attention: Map<number, string | undefined>;
  cancel: boolean;
  responses: number;
  /** A workflow run: its operations without a result yet (number → "kind name"). */
  openOps: Map<number, string>;
  /** A workflow run: operations with a result. */
  doneOps: number;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function apply(s: State, e: LogEvent): void {
  switch (e.type) {
    case 'model_started':
      s.openModel = e.seq;
      s.carried = false;
      return;
    case 'model_response':
      delete s.openModel;
      if (e.purpose === 'summary') return;
      s.responses++;
      s.turnCalls = ((e.calls as { callId?: string }[] | undefined) ?? []).map((c) => c.callId ?? '');
      return;
    case 'model_failed':
      delete s.openModel;
      return;
    case 'tool_started':
      s.started.add(str(e.callId) ?? '');
      return;
    case 'tool_result':
      s.done.add(str(e.callId) ?? '');
      // A result that resolved its turn may carry the next model call's reservation.
      if (e.reservation) {
        s.openModel = e.seq;
        s.carried = true;
      }
      return;
    case 'approval_decided':
      // A rejection or an expiry is the call's result.
      if (e.decision === 'reject' || e.decision === 'expire') s.done.add(str(e.callId) ?? '');
      return;
    case 'attention_required':
      s.attention.set(e.seq, str(e.callId));
      return;
    case 'attention_resolved': {
      s.attention.delete(typeof e.attentionSeq === 'number' ? e.attentionSeq : -1);
      const callId = str(e.callId);
      if (callId && (e.outcome === 'succeeded' || e.outcome === 'failed')) s.done.add(callId);
      return;
    }
    case 'cancel_requested':
      s.cancel = true;
      return;
    case 'run_completed':
    case 'run_failed':
    case 'run_cancelled':
      s.outcome = e.type;
      return;
    case 'op_started':
    case 'op_retry':
      s.openOps.set(Number(e.op), `${str(e.kind) ?? 'op'} ${str(e.name) ?? ''}`.trim());
      return;
    case 'op_result':
      s.openOps.delete(Number(e.op));
      s.doneOps++;
      return;
    case 'user_message':
      // A follow-up reopens a completed run.
      if (s.outcome === 'run_completed') delete s.outcome;
      return;
    default:
      return;
  }
}

/** Why the API would refuse a fork right after `e` (undefined: a boundary). */
function refusal(s: State, e: LogEvent): string | undefined {
  if (s.outcome) return `${e.type}, the end of the run: fork at an earlier turn boundary`;
  const open = s.turnCalls.filter((id) => !s.done.has(id));
  const started = open.find((id) => s.started.has(id));
  if (started) return `mid-call: call ${started} started and has no result here`;
  if (open.length > 0) return `mid-turn: call ${open[0]} has no result here`;
  // The reservation a result carries belongs to the turn after it: a fork there drops it.
  if (s.openModel !== undefined && !(s.carried && s.openModel === e.seq)) return `mid-call: the model call at seq ${s.openModel} has no response here`;
  if (s.attention.size > 0 || s.cancel) return s.cancel ? 'the run is cancelling here' : 'the run is parked here';
  if (s.responses === 0) return 'no model response yet (fork at 1)';
  return undefined;
}

/** Why the API would refuse a workflow run's fork right after `e` (undefined: every operation has its result). */
function workflowRefusal(s: State, e: LogEvent): string | undefined {
  if (s.outcome) return `${e.type}, the end of the run: fork at an earlier seq`;
  const [op, what] = [...s.openOps.entries()].sort((a, b) => a[0] - b[0])[0] ?? [];
  if (op !== undefined) return `operation ${op} (${what}) has no result here`;
  if (s.attention.size > 0 || s.cancel) return s.cancel ? 'the run is cancelling here' : 'the run is parked here';
  return undefined;
}

/** Every seq of the log with whether a fork can start right after it. */
export function forkPoints(events: readonly LogEvent[]): ForkPoint[] {
  const s: State = { turnCalls: [], started: new Set(), done: new Set(), attention: new Map(), cancel: false, responses: 0, openOps: new Map(), doneOps: 0 };
  const workflow = events.some((e) => e.seq === 1 && e.type === 'run_started' && e.workflow !== undefined && e.workflow !== null);
  const points: ForkPoint[] = [];
  for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
    if (e.seq === 1) {
      points.push({ seq: 1, type: e.type, ok: true, label: 'the start: the same input, nothing run yet' });
      continue;
    }
    apply(s, e);
    const reason = workflow ? workflowRefusal(s, e) : refusal(s, e);
    const label = workflow ? `after ${plural(s.doneOps, 'operation result')}, none in flight` : `after the model's turn ${s.responses}, every call answered`;
    points.push(reason === undefined ? { seq: e.seq, type: e.type, ok: true, label } : { seq: e.seq, type: e.type, ok: false, reason, label: '' });
  }
  return points;
}
