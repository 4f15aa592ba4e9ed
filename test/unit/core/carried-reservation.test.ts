// A tool_result that carries the next model call's reservation folds exactly as that tool_result
// followed by a model_started with the same fields; logs written before the carry (separate
// model_started events) still fold to the same run.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CorruptLogError } from '../../../lib/core/errors.js';
import { foldLog, previewToolResult } from '../../../lib/core/fold.js';
import { parseEvent, reservationOf, type EventOf } from '../../../lib/core/events.js';
import type { RunState } from '../../../lib/core/state.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';

type Raw = Record<string, unknown> & { type: string; seq: number };

const echo = defineTool({
  name: 'echo',
  version: '1',
  description: 'echo',
  input: z.object({ text: z.string() }),
  policy: 'rerun',
  async execute({ text }) {
    return text;
  },
});

/** A run of three turns, two of them with two parallel calls, as the engine writes it now. */
async function carriedLog(): Promise<Raw[]> {
  const t = scriptedWorld({
    tools: [echo],
    script: [
      { calls: [{ name: 'echo', args: { text: 'a' } }, { name: 'echo', args: { text: 'b' } }] },
      { calls: [{ name: 'echo', args: { text: 'c' } }] },
      { calls: [{ name: 'echo', args: { text: 'd' } }, { name: 'echo', args: { text: 'e' } }] },
      { text: 'bye' },
    ],
  });
  await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
  await driveRun(t.world, t.run, { worker: () => t.worker });
  return (await t.storage.log.read(t.run, { afterSeq: 0 })).events as Raw[];
}

/**
 * The same log as an older engine wrote it: each carried reservation becomes its own
 * model_started right after the result, seqs renumbered and callIds (`<seq of the response>-<i>`)
 * following their response.
 */
function expandCarried(log: Raw[]): Raw[] {
  const seqMap = new Map<number, number>();
  let next = 0;
  for (const e of log) {
    seqMap.set(e.seq, ++next);
    if (e.type === 'tool_result' && e.reservation) next++;
  }
  const callId = (id: unknown) => {
    const [seq, i] = String(id).split('-');
    return `${seqMap.get(Number(seq))}-${i}`;
  };
  const out: Raw[] = [];
  for (const e of log) {
    const seq = seqMap.get(e.seq)!;
    const copy: Raw = { ...structuredClone(e), seq };
    if (typeof copy.callId === 'string') copy.callId = callId(copy.callId);
    if (Array.isArray(copy.calls)) copy.calls = (copy.calls as Record<string, unknown>[]).map((c) => ({ ...c, callId: callId(c.callId) }));
    const reservation = copy.reservation;
    delete copy.reservation;
    out.push(copy);
    if (reservation) out.push({ v: 1, seq: seq + 1, at: e.at, by: e.by, type: 'model_started', ...(reservation as Record<string, unknown>) });
  }
  return out;
}

/** What a run is, without the seqs and callIds that the extra events shift. */
function essence(s: RunState) {
  return {
    status: s.status,
    usage: s.usage,
    unansweredModelCalls: s.unansweredModelCalls,
    answered: s.answered,
    openModel: s.openModel?.reserved,
    outcome: s.outcome && { ...s.outcome, seq: undefined },
    messages: s.messages.map((m) => (m.role === 'user' ? m : m.role === 'tool' ? { ...m, callId: undefined } : { ...m, calls: m.calls.map((c) => ({ ...c, callId: undefined })) })),
    calls: Object.values(s.calls).map((c) => ({ ...c, callId: undefined, modelSeq: undefined })),
  };
}

describe('a reservation carried by a tool_result', () => {
  it('is what the engine writes: one per turn after the first, on the result that resolves the turn', async () => {
    const log = await carriedLog();
    expect(log.map((e) => e.type)).toEqual([
      'run_started',
      'model_started',
      'model_response',
      'tool_started',
      'tool_started',
      'tool_result',
      'tool_result',
      'model_response',
      'tool_started',
      'tool_result',
      'model_response',
      'tool_started',
      'tool_started',
      'tool_result',
      'tool_result',
      'model_response',
      'run_completed',
    ]);
    // Only the second result of a parallel pair carries: the first leaves a call open.
    expect(log.map((e) => (e.type === 'tool_result' ? reservationOf(e)?.step ?? 0 : undefined)).filter((x) => x !== undefined)).toEqual([0, 2, 3, 0, 4]);
    expect(foldLog(log).usage.steps).toBe(4);
  });

  it('folds exactly as the old log with separate model_started events, whole and at every cut', async () => {
    const carried = await carriedLog();
    const old = expandCarried(carried);
    expect(old.filter((e) => e.type === 'model_started')).toHaveLength(4);
    expect(old.some((e) => 'reservation' in e)).toBe(false);
    expect(essence(foldLog(carried))).toEqual(essence(foldLog(old)));
    // A crash can cut the log after any event: every prefix of the new log folds as the old log
    // cut at the same point (after a carried result: after its model_started).
    const toOld = new Map<number, number>();
    let n = 0;
    for (const e of carried) toOld.set(e.seq, (n += e.type === 'tool_result' && e.reservation ? 2 : 1));
    for (let cut = 1; cut <= carried.length; cut++) {
      const a = foldLog(carried.slice(0, cut));
      const b = foldLog(old.slice(0, toOld.get(cut)));
      expect(essence(a), `cut after seq ${cut}`).toEqual(essence(b));
    }
  });

  it('cut right after the carrying result: charged, counted as a model call with no response yet', async () => {
    const log = await carriedLog();
    const i = log.findIndex((e) => e.type === 'tool_result' && e.reservation);
    const before = foldLog(log.slice(0, i));
    const after = foldLog(log.slice(0, i + 1));
    const r = reservationOf(log[i]!)!;
    expect(after.usage).toEqual({
      steps: before.usage.steps + 1,
      inputTokens: before.usage.inputTokens + r.reserved.inputTokens,
      outputTokens: before.usage.outputTokens + r.reserved.outputTokens,
      costUsd: before.usage.costUsd + r.reserved.costUsd,
    });
    expect(after.openModel).toEqual({ seq: log[i]!.seq, reserved: r.reserved });
    expect(after.unansweredModelCalls).toBe(1);
  });

  it('is corruption on a result that leaves a call open, or with the wrong step', async () => {
    const log = await carriedLog();
    const r = reservationOf(log.find((e) => e.type === 'tool_result' && e.reservation)!)!;
    // The first of a parallel pair leaves the second call open.
    const firstOfPair = log.findIndex((e) => e.type === 'tool_result');
    const early = log.slice(0, firstOfPair + 1);
    early[firstOfPair] = { ...early[firstOfPair]!, reservation: { ...r, step: 2 } };
    expect(() => foldLog(early)).toThrow(/no result/);
    const i = log.findIndex((e) => e.type === 'tool_result' && e.reservation);
    const wrong = log.slice(0, i + 1);
    wrong[i] = { ...wrong[i]!, reservation: { ...r, step: 7 } };
    expect(() => foldLog(wrong)).toThrow(CorruptLogError);
  });

  it('is decided on a preview that leaves the live state untouched', async () => {
    const log = await carriedLog();
    const i = log.findIndex((e) => e.type === 'tool_result' && e.reservation);
    const state = foldLog(log.slice(0, i));
    const copy = structuredClone(state);
    const plain = { ...log[i]! };
    delete plain.reservation;
    const preview = previewToolResult(state, parseEvent(plain) as EventOf<'tool_result'>);
    expect(state).toEqual(copy);
    expect(preview.lastSeq).toBe(state.lastSeq + 1);
    expect(preview.messages).toHaveLength(state.messages.length + 1);
    expect(preview.turnCalls.every((id) => preview.calls[id]?.status === 'done')).toBe(true);
  });
});
