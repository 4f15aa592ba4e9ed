import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunState } from '../../../lib/core/state.js';
import { runStep } from '../../../lib/engine/step-runner.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { RunLoader } from '../../../lib/engine/run-loader.js';
import { decodeSnapshot, encodeSnapshot } from '../../../lib/engine/snapshot-codec.js';
import { defineTool } from '../../../lib/engine/tools.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { logOf } from './helpers.js';

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

  it('still reads a snapshot written as the bare state', async () => {
    const { state } = await foldedRun(2);
    expect(decodeSnapshot(new TextEncoder().encode(JSON.stringify(state)))).toEqual(state);
  });

  it('rejects what does not restore exactly, so the loader replays the log instead', async () => {
    const { state } = await foldedRun(2);
    const encoded = JSON.parse(new TextDecoder().decode(encodeSnapshot(state))) as { shared: Record<string, string>; state: RunState };
    const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    // A shared body whose message is gone.
    expect(decodeSnapshot(bytes({ ...encoded, state: { ...encoded.state, messages: [] } }))).toBeUndefined();
    // A call left without its args and not listed as shared.
    expect(decodeSnapshot(bytes({ ...encoded, shared: {} }))).toBeUndefined();
    // Another fold version, another encoding.
    expect(decodeSnapshot(bytes({ ...encoded, state: { ...encoded.state, foldVersion: 999 } }))).toBeUndefined();
    expect(decodeSnapshot(bytes({ ...encoded, encoding: 3 }))).toBeUndefined();
  });

  it('a cold load starts from the encoded snapshot and folds the tail to the state a full replay gives', async () => {
    const { state, t } = await foldedRun(25);
    const head = await t.storage.heads.getHead(t.run);
    expect(head?.snapshot?.seq).toBeGreaterThan(0);
    expect(new TextDecoder().decode(await t.storage.blobs.get(head!.snapshot!.key))).toContain('"encoding":2');
    const loaded = await new RunLoader({ log: t.storage.log, heads: t.storage.heads, blobs: t.storage.blobs }).load(t.run, head);
    expect(loaded.stats.source).toBe('snapshot');
    expect(loaded.stats.tailEvents).toBe(state.lastSeq - head!.snapshot!.seq);
    expect(loaded.state).toEqual(state);
    expect(state.outcome).toMatchObject({ type: 'completed' });
  });
});
