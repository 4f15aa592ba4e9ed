import type { RunView } from 'logbook/local';
import { duplicateEffects, type SideEffect } from '../ledger.js';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface RunRecord {
  runId: string;
  view: RunView;
  events: Record<string, unknown>[];
}

/** Every run completed: parks were resolved, nothing failed or was left hanging. */
export function checkFinished(runs: RunRecord[]): Check {
  const bad = runs.filter((r) => r.view.status !== 'completed');
  return {
    name: 'every run finished',
    ok: bad.length === 0,
    detail: bad.length === 0 ? `${runs.length} of ${runs.length} completed` : bad.map((r) => `${r.runId}: ${r.view.status}`).join(', '),
  };
}

/**
 * No side effect that is not idempotent happened twice: per (service, call key) at most one
 * applied effect, and per completed run exactly one ticket, one email and one refund.
 */
export function checkSideEffects(runs: RunRecord[], effects: SideEffect[]): Check {
  const dupes = duplicateEffects(effects);
  const problems = dupes.map((d) => `${d.key} x${d.count}`);
  for (const r of runs) {
    if (r.view.status !== 'completed') continue;
    for (const service of ['tickets', 'email', 'payments'] as const) {
      const applied = effects.filter((e) => e.runId === r.runId && e.service === service && e.applied).length;
      if (applied !== 1) problems.push(`${r.runId}: ${service} applied ${applied} times`);
    }
  }
  return {
    name: 'no side effect twice',
    ok: problems.length === 0,
    detail: problems.length === 0 ? `${effects.filter((e) => e.applied && !e.readOnly).length} writes, each once` : problems.join('; '),
  };
}

/** The model steps the log reserved: each model_started, and each reservation a tool_result carries. */
function reservedSteps(events: RunRecord['events']): number[] {
  const steps: number[] = [];
  for (const e of events) {
    if (e.type === 'model_started') steps.push(Number(e.step));
    else if (e.type === 'tool_result' && e.reservation) steps.push(Number((e.reservation as { step?: unknown }).step));
  }
  return steps;
}

/**
 * No budget was reset: the log has one run_started, contiguous seqs, model_started steps counting
 * 1, 2, 3... without a restart, and the head's step count equals the reservations in the log.
 */
export function checkBudgets(runs: RunRecord[]): Check {
  const problems: string[] = [];
  for (const r of runs) {
    const seqs = r.events.map((e) => Number(e.seq));
    if (seqs.some((s, i) => s !== i + 1)) problems.push(`${r.runId}: seqs not contiguous`);
    if (r.events.filter((e) => e.type === 'run_started').length !== 1) problems.push(`${r.runId}: run_started not exactly once`);
    const steps = reservedSteps(r.events);
    if (steps.some((s, i) => s !== i + 1)) problems.push(`${r.runId}: model steps ${steps.join(',')}`);
    if (r.view.usage.steps !== steps.length) problems.push(`${r.runId}: head says ${r.view.usage.steps} steps, log has ${steps.length}`);
    const budgets = r.view.budgets;
    if (budgets && typeof budgets.maxSteps === 'number' && steps.length > budgets.maxSteps) {
      problems.push(`${r.runId}: ${steps.length} steps over the cap ${budgets.maxSteps}`);
    }
  }
  return {
    name: 'no budget reset',
    ok: problems.length === 0,
    detail: problems.length === 0 ? 'step counts continuous in every log' : problems.join('; '),
  };
}

/** The scripted model is deterministic: interrupted runs answer exactly like uninterrupted ones. */
export function checkAnswers(runs: RunRecord[], expected?: string): Check {
  const done = runs.filter((r) => r.view.status === 'completed').map((r) => ({ runId: r.runId, answer: JSON.stringify(r.view.result) }));
  const reference = expected !== undefined ? JSON.stringify(expected) : done[0]?.answer;
  const differing = done.filter((a) => a.answer !== reference);
  return {
    name: 'same answer as an uninterrupted run',
    ok: differing.length === 0,
    // Name the runs and their answers: a different one is what to look at in its log.
    detail:
      differing.length === 0
        ? `${done.length} identical answers`
        : `${differing.length} answers differ from ${reference}: ${differing.map((d) => `${d.runId} ${d.answer}`).join('; ')}`,
  };
}

/**
 * The head converged to the log once the run settled: its lastSeq is the log's last seq, its step
 * count is the log's model_started count, and its status is the one the log's last outcome says.
 */
export function checkHeads(runs: RunRecord[]): Check {
  const problems: string[] = [];
  const terminal: Record<string, string> = { run_completed: 'completed', run_failed: 'failed', run_cancelled: 'cancelled' };
  for (const r of runs) {
    const last = r.events.at(-1);
    if (!last) {
      problems.push(`${r.runId}: empty log`);
      continue;
    }
    if (r.view.lastSeq !== Number(last.seq)) problems.push(`${r.runId}: head at seq ${r.view.lastSeq}, log at ${String(last.seq)}`);
    const steps = reservedSteps(r.events).length;
    if (r.view.usage.steps !== steps) problems.push(`${r.runId}: head ${r.view.usage.steps} steps, log ${steps}`);
    const status = terminal[String(last.type)];
    if (status && r.view.status !== status) problems.push(`${r.runId}: head ${r.view.status}, log ${status}`);
  }
  return {
    name: 'head equals the fold of the log',
    ok: problems.length === 0,
    detail: problems.length === 0 ? `${runs.length} heads match their logs` : problems.join('; '),
  };
}

/** search_orders starts in a run's log (each one the lookup ran, or was about to). */
export function lookupStarts(r: RunRecord): number {
  const lookups = new Set<string>();
  for (const e of r.events) {
    if (e.type !== 'model_response') continue;
    for (const c of (e.calls as { callId?: string; name?: string }[] | undefined) ?? []) if (c.name === 'search_orders' && c.callId) lookups.add(c.callId);
  }
  return r.events.filter((e) => e.type === 'tool_started' && lookups.has(String(e.callId))).length;
}

/**
 * The poison run (its lookup kills its worker every time) ended clearly: parked on a reason, or
 * failed, never completed; and not by the dead-letter queue taking its tick.
 */
export function checkPoisonRun(r: RunRecord, leftParked: string | undefined, deadLettered: number): Check {
  const problems: string[] = [];
  const status = r.view.status;
  const reason = leftParked ?? (r.view.park ? `${r.view.park.reason}: ${r.view.park.detail}` : r.view.attention[0]?.reason);
  if (status === 'completed') problems.push(`completed with ${JSON.stringify(r.view.result)}`);
  else if (status === 'parked' && !reason) problems.push('parked without a reason');
  else if (status !== 'parked' && status !== 'failed') problems.push(`ended ${status}`);
  if (deadLettered > 0) problems.push(`${deadLettered} of its ticks dead-lettered`);
  const starts = lookupStarts(r);
  if (starts < 2) problems.push(`its lookup started only ${starts} time(s)`);
  return {
    name: 'a poison run ends parked or failed before the DLQ',
    ok: problems.length === 0,
    detail: problems.length === 0 ? `${r.runId}: ${status} after ${starts} lookup starts, each killing its worker (${reason ?? 'failed'})` : `${r.runId}: ${problems.join('; ')}`,
  };
}

/**
 * The run whose lookup fails every time completed with the model's answer to that error: the
 * error result is in the log, and nothing was written for it.
 */
export function checkFailingLookup(r: RunRecord, effects: SideEffect[]): Check {
  const problems: string[] = [];
  if (r.view.status !== 'completed') problems.push(`ended ${r.view.status}`);
  const errors = r.events.filter((e) => e.type === 'tool_result' && e.ok === false && e.errorCode === 'orders_unavailable');
  if (errors.length !== 1) problems.push(`${errors.length} orders_unavailable error results`);
  const answer = JSON.stringify(r.view.result ?? null);
  if (!answer.includes('could not look up') || !answer.includes('orders_unavailable')) problems.push(`answer ${answer}`);
  const writes = effects.filter((e) => e.runId === r.runId && e.applied && !e.readOnly).length;
  if (writes > 0) problems.push(`${writes} writes`);
  return {
    name: 'a failing read ends in its error result',
    ok: problems.length === 0,
    detail: problems.length === 0 ? `${r.runId}: completed with ${answer}` : `${r.runId}: ${problems.join('; ')}`,
  };
}
