import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { LoggedMessage } from '../../../lib/core/messages.js';
import type { RunState } from '../../../lib/core/state.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { RunLoader } from '../../../lib/engine/run-loader.js';
import { decodeSnapshot, encodeSnapshot } from '../../../lib/engine/snapshot-codec.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { logOf } from './helpers.js';
import { foldLog } from '../../../lib/core/fold.js';
import { estimateInputTokens } from '../../../lib/core/budgets.js';
import { driveToEnd, resolverOf } from '../../../lib/testing/harness-points.js';
import { guardedScenario } from '../../../examples/support-agent/guarded-world.js';
import { supportScenario } from '../../../examples/support-agent/support-world.js';

const lookup = defineTool({
  name: 'lookup',
  version: '1',
  description: 'look',
  input: z.object({ q: z.string() }),
  policy: 'rerun',
  execute: async ({ q }) => ({ q, found: 'x'.repeat(400) }),
});

/** The folded state of a finished run of `turns` lookups, one step per turn (snapshots on). */
async function foldedRun(turns: number): Promise<{ state: RunState; t: ReturnType<typeof scriptedWorld> }> {
  const script = Array.from({ length: turns }, (_, i) => ({ calls: [{ name: 'lookup', args: { q: `question ${i}`.repeat(8) } }] }));
  const t = scriptedWorld({ tools: [lookup], script: [...script, { text: 'done' }], budgets: { maxSteps: turns + 1, maxInputTokens: 50_000_000, maxCostUsd: 500 } });
  await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
  for (;;) {
    const msg = t.storage.queue.take();
    if (!msg) break;
    const w = spawnWorker(t.world, undefined, { snapshotEvery: 10 });
    await runStep(w.deps, msg.tick, { owner: w.name, deadlineAt: t.world.clock.now() + 300_000, minTurnMs: 300_001 });
  }
  return { state: (await logOf(t.world, t.run)).state, t };
}

type Entry = unknown[];
interface Written {
  encoding: number;
  messages: unknown[];
  calls: { s?: string; callId: string }[];
  state: RunState;
  chars?: [number, number];
}
const written = (state: RunState) => JSON.parse(new TextDecoder().decode(encodeSnapshot(state))) as Written;
const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

/** Turn tuples written apart: the assistant tuple (its settled entries), then each tool tuple. */
function turnsApart(encoded: Written): Written {
  const messages = encoded.messages.flatMap((m) => {
    if (!Array.isArray(m) || m[0] !== 2) return [m];
    const entries = m.slice(2) as Entry[];
    return [[1, m[1], ...entries.map((e) => e.slice(0, 9))], ...entries.map((e) => [0, e[0], e[1], e[2], e[9], e[10]])];
  });
  return { ...encoded, messages };
}

describe('snapshot encoding', () => {
  it('decodes to exactly the folded state, with each body shared by its call and its message again', async () => {
    const { state } = await foldedRun(6);
    const decoded = decodeSnapshot(encodeSnapshot(state));
    expect(decoded).toEqual(state);
    const call = decoded!.calls['3-0']!;
    const asked = decoded!.messages.find((m) => m.role === 'assistant' && m.calls[0]?.callId === '3-0');
    const answered = decoded!.messages.find((m) => m.role === 'tool' && m.callId === '3-0');
    expect(asked?.role === 'assistant' && asked.calls[0]?.args).toBe(call.args);
    expect(answered?.role === 'tool' && answered.content).toBe(call.result?.output);
  });

  it('writes each body once: far fewer bytes than the bare state', async () => {
    const { state } = await foldedRun(6);
    const bare = JSON.stringify(state).length;
    const encoded = encodeSnapshot(state).length;
    console.info(`snapshot of 6 turns: bare state ${bare} bytes, encoded ${encoded} bytes`);
    expect(encoded).toBeLessThan(bare * 0.7);
  });

  it('keeps a body its message does not share where it is (an edit applied to one place only)', async () => {
    const { state } = await foldedRun(3);
    const own = { kind: 'inline' as const, value: { q: 'edited' } };
    state.calls['3-0']!.args = own;
    const decoded = decodeSnapshot(encodeSnapshot(state));
    expect(decoded).toEqual(state);
    expect(decoded!.calls['3-0']!.args).toEqual(own);
  });

  it('decodes only its own encoding: the bare state and older encodings are not used (the loader replays the log)', async () => {
    const { state } = await foldedRun(3);
    const encoded = written(state);
    expect(decodeSnapshot(bytes(encoded))).toEqual(state);
    expect(decodeSnapshot(bytes(state))).toBeUndefined();
    for (const encoding of [2, 3, 4]) expect(decodeSnapshot(bytes({ ...encoded, encoding }))).toBeUndefined();
    // The estimate's count is part of the encoding, not optional.
    const { chars: _chars, ...withoutCount } = encoded;
    expect(decodeSnapshot(bytes(withoutCount))).toBeUndefined();
  });

  it('writes any message or call it has no compact form for whole, and restores it exactly', async () => {
    const { state } = await foldedRun(3);
    // A blob body, an unknown field on a message and on a call's body: all kept as they are.
    const blob = { kind: 'blob' as const, key: 'k', sha256: 'a'.repeat(64), size: 9, summary: 's' };
    const tool = state.messages.findIndex((m) => m.role === 'tool');
    state.messages[tool] = { ...(state.messages[tool] as Extract<LoggedMessage, { role: 'tool' }>), content: blob };
    const asking = state.messages.findIndex((m) => m.role === 'assistant');
    state.messages[asking] = { ...state.messages[asking]!, extra: 1 } as unknown as LoggedMessage;
    state.messages.push({ role: 'user', content: { kind: 'inline', value: 'follow-up' } });
    expect(decodeSnapshot(encodeSnapshot(state))).toEqual(state);
  });

  it('rejects what does not restore exactly, so the loader replays the log instead', async () => {
    const { state } = await foldedRun(2);
    // One call of another shape, so the list of calls written apart is not empty.
    state.calls['3-0']!.rerunFrom = 0;
    const encoded = written(state);
    expect(encoded.calls.map((c) => c.callId)).toEqual(['3-0']);
    expect(decodeSnapshot(bytes(encoded))).toEqual(state);
    // Calls whose bodies and names are in messages that are gone.
    expect(decodeSnapshot(bytes({ ...encoded, messages: [] }))).toBeUndefined();
    // A call that left its args out without saying so.
    expect(decodeSnapshot(bytes({ ...encoded, calls: encoded.calls.map(({ s: _s, ...c }) => c) }))).toBeUndefined();
    // Another fold version, another encoding, a malformed one.
    expect(decodeSnapshot(bytes({ ...encoded, state: { ...encoded.state, foldVersion: 999 } }))).toBeUndefined();
    expect(decodeSnapshot(bytes({ ...encoded, encoding: 999 }))).toBeUndefined();
    expect(decodeSnapshot(bytes({ ...encoded, calls: {} }))).toBeUndefined();
    expect(decodeSnapshot(bytes({ ...encoded, messages: encoded.messages.map((m) => (Array.isArray(m) ? [7, ...m.slice(1)] : m)) }))).toBeUndefined();
    // Turns: an entry cut short or with a tool message's flag that is not one, a turn's call
    // written apart as well.
    const turns = (edit: (entry: Entry) => Entry) => encoded.messages.map((m) => (Array.isArray(m) && m[0] === 2 ? [m[0], m[1], ...(m.slice(2) as Entry[]).map(edit)] : m));
    expect(encoded.messages.filter((m) => Array.isArray(m) && m[0] === 2)).toHaveLength(1);
    expect(decodeSnapshot(bytes({ ...encoded, messages: turns((e) => e.slice(0, 10)) }))).toBeUndefined();
    expect(decodeSnapshot(bytes({ ...encoded, messages: turns((e) => [...e.slice(0, 9), 'no', e[10]]) }))).toBeUndefined();
    expect(decodeSnapshot(bytes({ ...encoded, calls: [...encoded.calls, { ...encoded.calls[0]!, callId: '6-0' }] }))).toBeUndefined();
    // Settled calls in their assistant messages' tuples (a turn written apart): cut short, without
    // their tool message, or written apart as well.
    const apart = turnsApart(encoded);
    expect(decodeSnapshot(bytes(apart))).toEqual(state);
    const entries = (edit: (entry: Entry) => Entry) =>
      apart.messages.map((m) => (Array.isArray(m) && m[0] === 1 ? [m[0], m[1], ...(m.slice(2) as Entry[]).map(edit)] : m));
    const settled = (entry: Entry) => entry.length === 9;
    expect(apart.messages.some((m) => Array.isArray(m) && m[0] === 1 && (m.slice(2) as Entry[]).some(settled))).toBe(true);
    expect(decodeSnapshot(bytes({ ...apart, messages: entries((e) => (settled(e) ? e.slice(0, 6) : e)) }))).toBeUndefined();
    expect(decodeSnapshot(bytes({ ...apart, messages: apart.messages.filter((m) => !(Array.isArray(m) && m[0] === 0 && m[1] === '6-0')) }))).toBeUndefined();
    expect(decodeSnapshot(bytes({ ...apart, calls: [...apart.calls, { ...apart.calls[0]!, callId: '6-0' }] }))).toBeUndefined();
  });

  it('writes a plain turn as one tuple, and a turn of any other shape apart', async () => {
    const { state } = await foldedRun(4);
    const kinds = (w: Written) => w.messages.map((m) => (Array.isArray(m) ? m[0] : 'whole'));
    // The input, apart turns, the answer.
    expect(kinds(written(state))).toEqual(['whole', 2, 2, 2, 2, 1]);
    // A tool message with a field of its own, a call of another shape: their turns come apart.
    const i = state.messages.findIndex((m) => m.role === 'tool' && m.callId === '6-0');
    state.messages[i] = { ...state.messages[i]!, extra: 1 } as unknown as LoggedMessage;
    state.calls['9-0']!.rerunFrom = 0;
    expect(kinds(written(state))).toEqual(['whole', 2, 1, 'whole', 1, 0, 2, 1]);
    expect(decodeSnapshot(encodeSnapshot(state))).toEqual(state);
  });

  it('reads a turn written apart (tool messages after their assistant tuple), the shared objects restored', async () => {
    const { state } = await foldedRun(3);
    const decoded = decodeSnapshot(bytes(turnsApart(written(state))));
    expect(decoded).toEqual(state);
    const answered = decoded!.messages.find((m) => m.role === 'tool' && m.callId === '3-0');
    expect(answered?.role === 'tool' && answered.content).toBe(decoded!.calls['3-0']!.result?.output);
  });

  it('restores the calls in the order the fold created them', async () => {
    const { state } = await foldedRun(4);
    state.calls['6-0']!.rerunFrom = 0; // written apart, between calls written in their messages
    expect(Object.keys(decodeSnapshot(encodeSnapshot(state))!.calls)).toEqual(Object.keys(state.calls));
  });

  it('carries the estimate\'s count of its messages, used only while the conversation starts with them', async () => {
    const { state } = await foldedRun(4);
    const fresh = estimateInputTokens(structuredClone(state));
    const encoded = JSON.parse(new TextDecoder().decode(encodeSnapshot(state))) as { chars: [number, number]; messages: unknown[] };
    expect(encoded.chars[0]).toBe(state.messages.length);
    const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    // The count is the snapshot's (hash-checked against its pointer): a decoded state uses it
    // instead of counting its history again, which this forged count shows.
    const forged = decodeSnapshot(bytes({ ...encoded, chars: [encoded.chars[0], encoded.chars[1] + 3000] }))!;
    expect(estimateInputTokens(forged)).toBe(fresh + 1000);
    // A message of the counted ones replaced (an approval edit does that): counted afresh.
    const i = forged.messages.findIndex((m) => m.role === 'tool');
    forged.messages[i] = { ...(forged.messages[i] as Extract<LoggedMessage, { role: 'tool' }>), content: { kind: 'inline', value: 'y'.repeat(900) } };
    expect(estimateInputTokens(forged)).toBe(estimateInputTokens(structuredClone(forged)));
    expect(estimateInputTokens(forged)).toBeGreaterThan(fresh);
    expect(estimateInputTokens(forged)).toBeLessThan(fresh + 1000);
    // More messages after the counted ones: the count plus theirs.
    const decoded = decodeSnapshot(encodeSnapshot(state))!;
    decoded.messages.push({ role: 'user', content: { kind: 'inline', value: 'z'.repeat(300) } });
    expect(estimateInputTokens(decoded)).toBe(estimateInputTokens(structuredClone(decoded)));
    // A count of another number of messages is not this snapshot's.
    expect(decodeSnapshot(bytes({ ...encoded, chars: [encoded.chars[0] - 1, encoded.chars[1]] }))).toBeUndefined();
    expect(decodeSnapshot(bytes({ ...encoded, chars: 5 }))).toBeUndefined();
  });

  it('writes a call answered by two tool messages apart, and restores it exactly', async () => {
    const { state } = await foldedRun(3);
    const i = state.messages.findIndex((m) => m.role === 'tool' && m.callId === '3-0');
    state.messages.push({ ...(state.messages[i] as Extract<LoggedMessage, { role: 'tool' }>), content: { kind: 'inline', value: 'again' } });
    const encoded = JSON.parse(new TextDecoder().decode(encodeSnapshot(state))) as { calls: { callId: string }[] };
    expect(encoded.calls.map((c) => c.callId)).toEqual(['3-0']);
    expect(decodeSnapshot(encodeSnapshot(state))).toEqual(state);
  });

  it('a cold load starts from the encoded snapshot and folds the tail to the state a full replay gives', async () => {
    const { state, t } = await foldedRun(25);
    const head = await t.storage.heads.getHead(t.run);
    expect(head?.snapshot?.seq).toBeGreaterThan(0);
    expect(new TextDecoder().decode(await t.storage.blobs.get(head!.snapshot!.key))).toContain('"encoding":5');
    const loaded = await new RunLoader({ log: t.storage.log, heads: t.storage.heads, blobs: t.storage.blobs }).load(t.run, head);
    expect(loaded.stats.source).toBe('snapshot');
    expect(loaded.stats.tailEvents).toBe(state.lastSeq - head!.snapshot!.seq);
    expect(loaded.state).toEqual(state);
    expect(state.outcome).toMatchObject({ type: 'completed' });
  });

  it('a cold load sends the snapshot read and its tail read at once', async () => {
    const { state, t } = await foldedRun(25);
    const head = await t.storage.heads.getHead(t.run);
    const order: string[] = [];
    let arrive: () => void = () => undefined;
    const blobs = {
      ...t.storage.blobs,
      get: async (key: string, options?: { sha256?: string }) => {
        order.push('snapshot asked');
        // The snapshot arrives when the tail read goes out (or after 100 ms, for a loader that
        // waits for the snapshot before it asks for the tail: the order below then fails).
        await new Promise<void>((resolve) => {
          arrive = resolve;
          setTimeout(resolve, 100);
        });
        order.push('snapshot arrived');
        return t.storage.blobs.get(key, options);
      },
    };
    const log = {
      ...t.storage.log,
      read: (...args: Parameters<typeof t.storage.log.read>) => {
        order.push(`tail asked after ${args[1]?.afterSeq}`);
        arrive();
        return t.storage.log.read(...args);
      },
    };
    const loaded = await new RunLoader({ log, heads: t.storage.heads, blobs }).load(t.run, head);
    expect(order).toEqual(['snapshot asked', `tail asked after ${head!.snapshot!.seq}`, 'snapshot arrived']);
    expect(loaded.stats.source).toBe('snapshot');
    expect(loaded.state).toEqual(state);
  });

  it('a snapshot that does not match its pointer is dropped for a full replay', async () => {
    const { state, t } = await foldedRun(25);
    const head = await t.storage.heads.getHead(t.run);
    const reads: number[] = [];
    const log = {
      ...t.storage.log,
      read: (...args: Parameters<typeof t.storage.log.read>) => {
        reads.push(args[1]?.afterSeq ?? 0);
        return t.storage.log.read(...args);
      },
    };
    const forged = { ...head!, snapshot: { ...head!.snapshot!, sha256: '0'.repeat(64) } };
    const loaded = await new RunLoader({ log, heads: t.storage.heads, blobs: t.storage.blobs }).load(t.run, forged);
    expect(reads).toEqual([head!.snapshot!.seq, 0]);
    expect(loaded.stats.source).toBe('replay');
    expect(loaded.state).toEqual(state);
  });

  // The richest logs the examples make: verify, escalate and parallel calls; a signal wait, an
  // edited approval and a follow-up message. Every state along the way restores exactly.
  for (const scenario of [supportScenario, guardedScenario]) {
    it(`restores the state after every event of the ${scenario.name} run`, async () => {
      const world = scenario.world();
      const worker = spawnWorker(world);
      const run = { tenant: scenario.request.tenant, runId: scenario.request.runId ?? 'codec-run' };
      await startRun(worker.deps, { ...scenario.request, runId: run.runId });
      const { ending } = await driveToEnd(world, run, { worker: () => worker, ...resolverOf(scenario, world) });
      expect(ending.kind).toBe('ended');
      const { events } = await world.storage.log.read(run, { afterSeq: 0 });
      expect(events.length).toBeGreaterThan(10);
      for (let n = 1; n <= events.length; n++) {
        const state = foldLog(events.slice(0, n));
        const decoded = decodeSnapshot(encodeSnapshot(state));
        expect(decoded, `after ${n} of ${events.length} events`).toEqual(state);
        // The estimate from the characters the snapshot carries is the one counted afresh.
        expect(estimateInputTokens(decoded!)).toBe(estimateInputTokens(structuredClone(state)));
      }
    });
  }
});
