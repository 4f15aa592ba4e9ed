import { canonicalJson } from '../core/json.js';
import { foldLog } from '../core/fold.js';
import type { RunRef } from '../core/run-ref.js';
import type { World } from './world.js';

interface LoggedInboxEvent {
  type: string;
  inboxId?: string;
  seq: number;
}

/**
 * The invariants of a run once the system settled, at every crash point, besides those of
 * checkInvariants:
 * - no inbox item lost or applied twice: the inbox is empty and nothing is pending on the head;
 *   every answer the API accepted is in the log (or was ignored because another won first); no
 *   inbox id has two events;
 * - the head converged to the fold of the log (lastSeq, status, usage, attention, outcome seq);
 * - every owed outcome was published, and each notice id (runId:seq) names one outcome.
 */
/** `submitted`: the inbox ids of the call answers (resolutions) the API accepted. */
export async function checkSettled(world: World, run: RunRef, submitted: readonly string[], failures: string[]): Promise<void> {
  const { storage } = world;
  const page = await storage.log.read(run, { afterSeq: 0 });
  const events = page.events as unknown as LoggedInboxEvent[];
  const state = foldLog(page.events);
  const head = await storage.heads.getHead(run);
  if (!head) {
    failures.push('no head after the run settled');
    return;
  }

  // 1. Inbox: nothing left behind, nothing applied twice, nothing accepted and lost.
  const left = await storage.inbox.list(run);
  if (left.length > 0) failures.push(`inbox items left unprocessed: ${left.map((i) => `${i.kind} ${i.id}`).join(', ')}`);
  if (head.inboxVersion > head.ingestedInboxVersion && left.length > 0)
    failures.push(`head says inbox items are pending (${head.inboxVersion} > ${head.ingestedInboxVersion})`);
  const byInbox = new Map<string, number>();
  for (const e of events) if (e.inboxId) byInbox.set(e.inboxId, (byInbox.get(e.inboxId) ?? 0) + 1);
  for (const [id, n] of byInbox) if (n > 1) failures.push(`inbox item ${id} applied ${n} times`);
  // The harness's person answers a call only when nothing of an earlier answer is pending, so
  // every accepted call answer must be in the log (a lost one is why the run parked again).
  for (const id of submitted) if (!byInbox.has(id)) failures.push(`accepted answer ${id} never reached the log`);

  // 2. The head is the fold of the log.
  if (head.lastSeq !== state.lastSeq) failures.push(`head lastSeq ${head.lastSeq} != log ${state.lastSeq}`);
  if (canonicalJson(head.usage) !== canonicalJson(state.usage)) failures.push(`head usage ${canonicalJson(head.usage)} != fold ${canonicalJson(state.usage)}`);
  const folded = state.outcome?.type ?? state.status;
  if (state.outcome && head.status !== folded) failures.push(`head status ${head.status} != log ${folded}`);
  if (state.outcome && head.outcome?.seq !== state.outcome.seq) failures.push(`head outcome seq ${head.outcome?.seq} != log ${state.outcome.seq}`);
  if (head.attention.length !== state.attention.length) failures.push(`head has ${head.attention.length} open attention(s), the log ${state.attention.length}`);

  // 3. Outcome notices: the final one published, and one outcome per notice id.
  const notices = (storage.publisher?.notices ?? []) as { runId: string; seq: number; status: string }[];
  if (storage.publisher?.notices && state.outcome) {
    const mine = notices.filter((n) => n.runId === run.runId);
    if (!mine.some((n) => n.seq === state.outcome?.seq && n.status === state.outcome.type)) {
      failures.push(`outcome ${state.outcome.type} at seq ${state.outcome.seq} was never published`);
    }
    const statusById = new Map<string, string>();
    for (const n of mine) {
      const id = `${n.runId}:${n.seq}`;
      const seen = statusById.get(id);
      if (seen !== undefined && seen !== n.status) failures.push(`notice ${id} published as ${seen} and as ${n.status}`);
      statusById.set(id, n.status);
    }
    if (head.notifiedSeq < state.outcome.seq) failures.push(`head notifiedSeq ${head.notifiedSeq} below the outcome seq ${state.outcome.seq}`);
  }
}
