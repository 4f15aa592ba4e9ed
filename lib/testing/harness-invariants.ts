import { AppendConflictError, errorMessage } from '../core/errors.js';
import { canonicalJson, type JsonValue } from '../core/json.js';
import { reservationOf, type Policy } from '../core/events.js';
import { foldLog } from '../core/fold.js';
import type { RunState } from '../core/state.js';
import { idempotencyKey, type RunRef } from '../core/run-ref.js';
import { TERMINAL_STATUSES, type RunHead } from '../ports/run-heads.js';
import type { HarnessScenario } from './harness-types.js';
import type { DriveResult } from './driver.js';
import { ResolverAnswerRefusedError } from './harness-errors.js';
import { repeatedEffects } from './side-effects.js';
import type { World } from './world.js';
import { plural } from '../core/plural.js';

/** How a driven run ended: what the invariants are judged against. */
export type Ending =
  | { kind: 'ended'; head: RunHead }
  /** Parked for a person, and the scenario's resolver did not (or could not) answer. */
  | { kind: 'parked'; head: RunHead; parks: string[] }
  /** The driver gave up: the run kept going, or something threw. */
  | { kind: 'unfinished'; detail: string; refused?: boolean };

/** The uninterrupted run's result, as every point is compared with it. */
export interface Baseline {
  /**
   * The answer itself: a text answer as the model wrote it (not JSON-quoted); a JSON answer as
   * canonical JSON; a large answer stored as a blob by its sha256; `(failed)` and the like for a
   * run that did not complete.
   */
  answer: string;
  /** A completed run's structured output (agents with an output schema), as JSON; a blob's by `{ sha256 }`. */
  output?: JsonValue;
  status: string;
  /** The code and message of a run that failed. */
  failure?: { code: string; message: string };
  steps: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  sideEffects: number;
  checkpoints: number;
  /** What the tools answered, in order: a run that saw the same can only have spent more. */
  toolOutputs: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the checks are generic over worlds and effects
export type AnyScenario = HarnessScenario<any, any>;

/** Each open park as text: `unknown_outcome on call 3-0: ...` or `poisoned (run): ...`. */
export function describeParks(head: RunHead): string[] {
  const parks = head.attention.map((a) => `${a.reason} on ${a.callId ? `call ${a.callId}` : 'the run'}: ${a.detail}`);
  if (head.park) parks.push(`${head.park.reason} on the run: ${head.park.detail}`);
  return parks.length > 0 ? parks : [`status ${head.status} with nothing open`];
}

/** Classify how a drive ended (its result, or what it threw). */
export async function endingOf(world: World, run: RunRef, drive: DriveResult | { error: unknown }): Promise<Ending> {
  if ('error' in drive) {
    const head = await world.storage.heads.getHead(run);
    const last = head ? ((await world.storage.log.readOne(run, head.lastSeq)) as { type?: string; callId?: string } | undefined) : undefined;
    const where = head
      ? `; the run is ${head.status} at seq ${head.lastSeq}${last?.type ? ` (last event ${last.type}${last.callId ? ` ${last.callId}` : ''})` : ''}`
      : '';
    const refused = drive.error instanceof ResolverAnswerRefusedError;
    return { kind: 'unfinished', detail: `${errorMessage(drive.error)}${where}`, ...(refused ? { refused } : {}) };
  }
  const { head } = drive;
  if (TERMINAL_STATUSES.has(head.status)) return { kind: 'ended', head };
  return { kind: 'parked', head, parks: describeParks(head) };
}

/** The failure text for a point whose run stayed parked: name the park and what to do. */
export function parkFailure(parks: readonly string[], hasResolver: boolean): string {
  return (
    `parked for a person (${parks.join('; ')}) and ` +
    (hasResolver ? 'the scenario resolver left it unanswered' : 'the scenario has no resolver: give the scenario a resolver')
  );
}

export interface RunOutcome {
  answer: string;
  output?: JsonValue;
  status: string;
  failure?: { code: string; message: string };
}

export function outcomeOf(state: RunState): RunOutcome {
  const outcome = state.outcome;
  if (outcome?.type === 'completed') {
    const body = outcome.answer;
    const answer = body.kind === 'blob' ? body.sha256 : typeof body.value === 'string' ? body.value : canonicalJson(body.value);
    const out = outcome.output;
    return { status: 'completed', answer, ...(out ? { output: out.kind === 'inline' ? out.value : { sha256: out.sha256 } } : {}) };
  }
  if (outcome?.type === 'failed') return { status: 'failed', answer: '(failed)', failure: { code: outcome.code, message: outcome.message } };
  return { status: outcome?.type ?? state.status, answer: `(${outcome?.type ?? state.status})` };
}

export async function readOutcome(world: World, run: RunRef): Promise<RunOutcome> {
  const page = await world.storage.log.read(run, { afterSeq: 0 });
  return outcomeOf(foldLog(page.events));
}

/** A live fold the worker reported after one of its appends. */
export interface ObservedFold {
  state: RunState;
  /** The run it belongs to (a child run's folds are checked against the child's log). */
  run?: RunRef;
}

/**
 * The invariants of one point: the log folds; the run ended as the uninterrupted one did (or why
 * not: a park nobody answered, a run that never finished, a different outcome); no once-only side
 * effect twice; spend recorded in the log never refunded or reset; live state equal to the fold.
 */
export async function checkInvariants(
  scenario: AnyScenario,
  world: World,
  run: RunRef,
  baseline: Baseline,
  folds: readonly ObservedFold[],
  ending: Ending,
  failures: string[],
): Promise<void> {
  const page = await world.storage.log.read(run, { afterSeq: 0 });
  let state: RunState;
  try {
    state = foldLog(page.events);
  } catch (error) {
    failures.push(`log does not fold: ${String(error)}`);
    return;
  }
  // 1. The ending. Budget comparisons with the uninterrupted run only make sense for a run that
  //    got as far: a run that stopped at a park has spent less, and that is no budget reset.
  const outcome = outcomeOf(state);
  const sameEnd = ending.kind === 'ended' && outcome.status === baseline.status;
  if (ending.kind === 'unfinished') failures.push(ending.refused ? ending.detail : `never finished: ${ending.detail}`);
  else if (ending.kind === 'parked') failures.push(parkFailure(ending.parks, scenario.resolver !== undefined));
  else if (!sameEnd) failures.push(`${describeOutcome(outcome)} where the uninterrupted run ${describeOutcome(baseline)}`);
  else if (outcome.answer !== baseline.answer) failures.push(answerDiffers(outcome.answer, baseline.answer, run));
  else if (canonicalJson(outcome.output ?? null) !== canonicalJson(baseline.output ?? null)) {
    failures.push(`output ${canonicalJson(outcome.output ?? null)} differs from the uninterrupted ${canonicalJson(baseline.output ?? null)}`);
  }

  // 2. No once-only side effect twice.
  for (const dup of repeatedEffects(scenario.sideEffects(world), scenario.onceKey)) {
    failures.push(duplicateFailure(dup, state));
  }

  // 3. Spend: one step per reservation (a model_started, or one carried by a tool_result) or, for a
  // workflow, per operation; usage equal to what the raw log says was spent.
  if (state.workflow) {
    const ops = new Set(page.events.flatMap((e) => (typeof (e as { op?: unknown }).op === 'number' ? [(e as { op: number }).op] : [])));
    if (state.usage.steps !== ops.size) failures.push(`steps ${state.usage.steps} != ${ops.size} operations in the log (budget reset)`);
  } else {
    const modelStarts = page.events.filter((e) => reservationOf(e as { type: string }) !== undefined).length;
    if (state.usage.steps !== modelStarts) failures.push(`steps ${state.usage.steps} != ${modelStarts} model reservations in the log (budget reset)`);
  }
  // Recomputed from the raw log, independently of fold: a model call's actual usage when it
  // answered, its reservation when it did not (a crash never refunds it).
  const expected = usageFromLog(page.events);
  for (const k of ['inputTokens', 'outputTokens', 'costUsd'] as const) {
    if (Math.abs(state.usage[k] - expected[k]) > 1e-9)
      failures.push(`${k} ${state.usage[k]} != ${expected[k]} recomputed from the log (budget refunded or reset)`);
  }
  // A crash can only add spend (an orphaned reservation stays spent), never take it back: when the
  // run ended as the baseline did and the model saw what it saw uninterrupted. (After a crash a
  // tool may answer differently, e.g. a deduplicated write says so, and a shorter conversation
  // costs fewer tokens.)
  if (sameEnd && toolOutputsOf(page.events) === baseline.toolOutputs) {
    if (state.usage.steps < baseline.steps) failures.push(`steps ${state.usage.steps} below the uninterrupted ${baseline.steps} (budget reset)`);
    for (const k of ['inputTokens', 'outputTokens', 'costUsd'] as const) {
      if (state.usage[k] < baseline[k] - 1e-9) failures.push(`${k} ${state.usage[k]} below the uninterrupted ${baseline[k]} (budget reset)`);
    }
  }

  // 4. Child runs: exactly one per child call, and its end reached the parent as the call's result.
  await checkChildren(world, run, state, failures);

  // 5. After every append, the worker's live state equalled the fold of the log up to that seq.
  const logs = new Map<string, unknown[]>([[run.runId, page.events]]);
  for (const f of folds) {
    const of = f.run ?? run;
    let events = logs.get(of.runId);
    if (!events) logs.set(of.runId, (events = (await world.storage.log.read(of, { afterSeq: 0 })).events));
    const prefix = events.filter((e) => (e as { seq: number }).seq <= f.state.lastSeq);
    if (canonicalJson(foldLog(prefix)) !== canonicalJson(f.state)) {
      failures.push(`live state${of.runId === run.runId ? '' : ` of ${of.runId}`} at seq ${f.state.lastSeq} differs from the fold of the log`);
      break;
    }
  }
}

/** A call id (`<seq of the model_response>-<index>`) where it stands alone in a text. */
const CALL_ID = /(?<![\w.-])\d+-\d+(?![\w.]|-\d)/g;

/**
 * "answer X differs from Y", and, when the two differ only in call ids, why that happens: a call id
 * is the seq of the model response that asked for the call, and a crash after a model call was
 * reserved and before its response landed makes the next response land later, so its calls get
 * other ids. A fake service that builds what it answers (an order id, a reference) from
 * ctx.idempotencyKey or ctx.callId then answers differently, and the model repeats it.
 */
export function answerDiffers(answer: string, baseline: string, run: RunRef): string {
  const base = `answer ${JSON.stringify(answer)} differs from the uninterrupted ${JSON.stringify(baseline)}`;
  const ids = (text: string) => text.match(CALL_ID) ?? [];
  const same = answer.replace(CALL_ID, '<callId>') === baseline.replace(CALL_ID, '<callId>');
  if (!same || ids(answer).length === 0) return base;
  const pairs = [
    ...new Set(
      ids(baseline)
        .map((id, i) => `${id} → ${ids(answer)[i]}`)
        .filter((p) => !/^(\S+) → \1$/.test(p)),
    ),
  ];
  return (
    `${base}: they differ only in call ids (${pairs.join(', ')}). A call id is <seq of the model response>-<index>, and ` +
    `the idempotency key is ${idempotencyKey(run, '<callId>')}; a crash after a model call was reserved and before its ` +
    `response was written makes the response land at a later seq, so its calls get new ids and new keys. A fake service ` +
    `that builds what it returns (an order id, a reference) from ctx.idempotencyKey or ctx.callId then answers with ` +
    `another id. Build such ids from the call's arguments (what the model asked for), or let the scenario's answer ` +
    `not depend on them; dedupe on ctx.idempotencyKey, but do not show it to the model.`
  );
}

function describeOutcome(o: Pick<RunOutcome, 'status' | 'answer' | 'failure'>): string {
  if (o.status === 'completed') return `completed with ${JSON.stringify(o.answer)}`;
  if (o.failure) return `failed (${o.failure.code}: ${o.failure.message})`;
  return `ended ${o.status}`;
}

/** Name the call and its policy when the once-key ends with a call id, and say what lets it repeat. */
function duplicateFailure(dup: { key: string; count: number }, state: RunState): string {
  const callId = /(\d+-\d+)$/.exec(dup.key)?.[1];
  const call = callId === undefined ? undefined : state.calls[callId];
  const base = `side effect ${dup.key} happened ${dup.count} times`;
  if (!call) return `${base} (repeated side effects)`;
  const policy = state.started.tools.find((t) => t.name === call.name)?.policy ?? 'escalate';
  const why = {
    rerun:
      'rerun runs a call again after a crash, so only read-only tools may have it: use idempotency_key (with a service that dedupes by ctx.idempotencyKey), verify or escalate',
    idempotency_key: 'the call ran again with the same ctx.idempotencyKey: the service must deduplicate by it',
    verify: 'its verify() said not_landed for a write that had landed',
    escalate: 'the resolver approved a rerun of a write that had landed',
  } satisfies Record<Policy, string>;
  return `${base}: call ${callId} of tool ${call.name} (policy ${policy}, ${plural(call.attempt, 'attempt')}); ${why[policy]}`;
}

/** Whether a stale worker's late append after `lastSeq` is rejected (it must be). */
export async function staleAppendRejected(world: World, run: RunRef, lastSeq: number): Promise<boolean> {
  const page = await world.storage.log.read(run, { afterSeq: lastSeq, limit: 1 });
  if (page.events.length === 0) return true; // nothing after it: no successor wrote there
  try {
    await world.storage.log.append(run, {
      v: 1,
      seq: lastSeq + 1,
      at: 0,
      by: { epoch: 1, nonce: 'stale-worker' },
      type: 'cancel_requested',
      requestedBy: 'stale',
      inboxId: 'stale',
    });
    return false;
  } catch (error) {
    return error instanceof AppendConflictError;
  }
}

interface LoggedModelEvent {
  type: string;
  reserved?: { inputTokens: number; outputTokens: number; costUsd: number };
  usage?: { inputTokens: number; outputTokens: number };
  costUsd?: number;
  callId?: string;
  /** A workflow operation's number. */
  op?: number;
  wait?: { kind: string; reserved?: { inputTokens: number; outputTokens: number; costUsd: number } };
  childUsage?: { inputTokens: number; outputTokens: number; costUsd: number };
}

function usageFromLog(events: unknown[]): { inputTokens: number; outputTokens: number; costUsd: number } {
  const total = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
  let open: LoggedModelEvent['reserved'];
  const settle = () => {
    if (!open) return;
    total.inputTokens += open.inputTokens;
    total.outputTokens += open.outputTokens;
    total.costUsd += open.costUsd;
    open = undefined;
  };
  // A child call's reservation is spent at its start; the child's answer replaces it, never above it.
  const childReserved = new Map<string, NonNullable<LoggedModelEvent['reserved']>>();
  for (const raw of events as LoggedModelEvent[]) {
    const reservation = reservationOf(raw);
    // A workflow's child operation: the same reservation, keyed by its operation.
    const opKey = typeof raw.op === 'number' ? `op-${raw.op}` : undefined;
    if (raw.type === 'op_started' && raw.wait?.kind === 'child' && raw.wait.reserved && opKey) {
      const r = raw.wait.reserved;
      childReserved.set(opKey, r);
      total.inputTokens += r.inputTokens;
      total.outputTokens += r.outputTokens;
      total.costUsd += r.costUsd;
    } else if (raw.type === 'op_result' && raw.childUsage && opKey) {
      const r = childReserved.get(opKey);
      if (r) for (const k of ['inputTokens', 'outputTokens', 'costUsd'] as const) total[k] += Math.min(raw.childUsage[k], r[k]) - r[k];
    } else if (raw.type === 'tool_started' && raw.wait?.kind === 'child' && raw.wait.reserved && raw.callId) {
      const r = raw.wait.reserved;
      childReserved.set(raw.callId, r);
      total.inputTokens += r.inputTokens;
      total.outputTokens += r.outputTokens;
      total.costUsd += r.costUsd;
    } else if (raw.type === 'tool_result' && (reservation || raw.childUsage)) {
      const r = raw.callId ? childReserved.get(raw.callId) : undefined;
      if (r && raw.childUsage) {
        for (const k of ['inputTokens', 'outputTokens', 'costUsd'] as const) total[k] += Math.min(raw.childUsage[k], r[k]) - r[k];
      }
      if (reservation) {
        settle();
        open = reservation.reserved;
      }
    } else if (raw.type === 'model_started') {
      settle();
      open = raw.reserved;
    } else if (raw.type === 'model_response') {
      open = undefined;
      total.inputTokens += raw.usage?.inputTokens ?? 0;
      total.outputTokens += raw.usage?.outputTokens ?? 0;
      total.costUsd += raw.costUsd ?? 0;
    }
  }
  settle();
  return total;
}

/** The tools' answers (a workflow's operation results) in log order, as one comparable string. */
export function toolOutputsOf(events: unknown[]): string {
  const answers = events.filter((e) => {
    const type = (e as { type?: string }).type;
    return type === 'tool_result' || type === 'op_result';
  });
  return canonicalJson(answers.map((e) => (e as { output?: unknown }).output));
}

/**
 * Each child call of the run has exactly the one child its id names (no second child: the parent
 * lists no other), and a child that ended gave the parent its answer: the call's result came
 * from the child and carries what the child ended with.
 */
async function checkChildren(world: World, run: RunRef, state: RunState, failures: string[]): Promise<void> {
  // A workflow's child operations, as calls: the same rules (one child each, its end delivered).
  const opCalls = (state.workflow?.ops ?? []).flatMap((o) =>
    o?.wait?.kind === 'child' ? [{ callId: `op-${o.op}`, wait: o.wait, ...(o.result ? { result: o.result } : {}) }] : [],
  );
  const calls = [...Object.values(state.calls).filter((c) => c.wait?.kind === 'child'), ...opCalls];
  const listed = (await world.storage.heads.listRuns(run.tenant, { parent: run.runId, limit: 100 })).runs.map((h) => h.runId);
  const expected = calls.map((c) => (c.wait?.kind === 'child' ? c.wait.runId : ''));
  const extra = listed.filter((id) => !expected.includes(id));
  if (extra.length > 0) failures.push(`child runs ${extra.join(', ')} belong to no child call (a second child)`);
  for (const call of calls) {
    if (call.wait?.kind !== 'child') continue;
    const childRef = { tenant: run.tenant, runId: call.wait.runId };
    const childPage = await world.storage.log.read(childRef, { afterSeq: 0 });
    if (childPage.events.length === 0) {
      if (call.result?.source === 'child') failures.push(`call ${call.callId} has a child result but child ${childRef.runId} has no log`);
      continue;
    }
    const child = foldLog(childPage.events);
    if (!child.outcome || call.result?.source !== 'child') {
      if (state.outcome?.type === 'completed')
        failures.push(`call ${call.callId}: child ${childRef.runId} is ${child.status} and the parent completed without its answer`);
      continue;
    }
    // A child with an output schema answers with its output (JSON), any other with its answer.
    const given = child.outcome.type === 'completed' ? (child.outcome.output ?? child.outcome.answer) : undefined;
    const answer = given?.kind === 'inline' ? canonicalJson(given.value) : undefined;
    const got = call.result.output.kind === 'inline' ? canonicalJson(call.result.output.value) : undefined;
    if (answer !== undefined && got !== answer)
      failures.push(`call ${call.callId}: result ${got} is not child ${childRef.runId}'s answer ${answer} (lost answer)`);
  }
}
