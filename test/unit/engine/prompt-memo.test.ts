// The prompt and the token estimate are memoized per message object (a long run rebuilds its
// whole conversation before every model call). That is sound only while no message changes in
// place: the approval edit is the one event that rewrites an earlier message.
import { describe, expect, it } from 'vitest';
import { estimateInputTokens } from '../../../lib/core/budgets.js';
import { parseEvent } from '../../../lib/core/events.js';
import { applyEvent, foldLog } from '../../../lib/core/fold.js';
import type { ModelMessage } from '../../../lib/core/messages.js';
import { Redactor } from '../../../lib/core/redaction.js';
import { MemoryBlobStore } from '../../../lib/adapters/memory/index.js';
import { PayloadCodec } from '../../../lib/engine/payload-codec.js';
import { buildModelRequest } from '../../../lib/engine/prompt.js';
import { driveToEnd, resolverOf } from '../../../lib/testing/harness-points.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { guardedScenario } from '../../../examples/support-agent/guarded-world.js';

async function guardedLog(): Promise<Record<string, unknown>[]> {
  const world = guardedScenario.world();
  const worker = spawnWorker(world);
  const run = { tenant: guardedScenario.request.tenant, runId: 'prompt-memo' };
  await startRun(worker.deps, { ...guardedScenario.request, runId: run.runId });
  await driveToEnd(world, run, { worker: () => worker, ...resolverOf(guardedScenario, world) });
  return (await world.storage.log.read(run, { afterSeq: 0 })).events as Record<string, unknown>[];
}

const codec = () => new PayloadCodec({ blobs: new MemoryBlobStore(), redactor: new Redactor() });
const argsOf = (messages: ModelMessage[]) => messages.flatMap((m) => (m.role === 'assistant' ? m.calls.map((c) => c.args) : []));

describe('the prompt and the estimate, memoized per message', () => {
  it('follow an approval edit of a message they were built from', async () => {
    const events = await guardedLog();
    const edit = events.findIndex((e) => e.type === 'approval_decided' && e.decision === 'edit');
    expect(edit).toBeGreaterThan(0);
    // As a warm container holds it: one state, folded in place, the memos filled before the edit.
    const state = foldLog(events.slice(0, edit));
    const before = await buildModelRequest(state, codec(), 100);
    const estimateBefore = estimateInputTokens(state);
    // Longer arguments than the model asked for, so that a stale size would show in the estimate.
    const edited = { ...events[edit]!, args: { kind: 'inline', value: { ...((events[edit]!.args as { value: object }).value), note: 'edited by a person' } } };
    applyEvent(state, parseEvent(edited));
    const after = await buildModelRequest(state, codec(), 100);
    // A copy has no memo: what the memoized path must equal.
    const fresh = structuredClone(state);
    expect(after).toEqual(await buildModelRequest(fresh, codec(), 100));
    expect(estimateInputTokens(state)).toBe(estimateInputTokens(fresh));
    expect(argsOf(after.messages)).toContainEqual(edited.args.value);
    expect(argsOf(after.messages)).not.toEqual(argsOf(before.messages));
    expect(estimateInputTokens(state)).toBeGreaterThan(estimateBefore);
  });

  it('hands the model read-only messages: a client that writes into one cannot change the next request', async () => {
    const state = foldLog(await guardedLog());
    const first = await buildModelRequest(state, codec(), 100);
    const assistant = first.messages.find((m) => m.role === 'assistant' && m.calls.length > 0);
    if (assistant?.role !== 'assistant') throw new Error('the guarded run has a tool call');
    expect(() => {
      (assistant as { text: string }).text = 'rewritten';
    }).toThrow(TypeError);
    expect(() => assistant.calls.pop()).toThrow(TypeError);
    const tool = first.messages.find((m) => m.role === 'tool');
    expect(() => {
      (tool as { content: string }).content = 'rewritten';
    }).toThrow(TypeError);
    expect(await buildModelRequest(structuredClone(state), codec(), 100)).toEqual(await buildModelRequest(state, codec(), 100));
  });

  it('resolves bodies held in blobs (a large tool output, large arguments) into the prompt, and keeps them', async () => {
    const blobs = new MemoryBlobStore();
    const writer = new PayloadCodec({ blobs, redactor: new Redactor(), inlineLimitBytes: 1024 });
    const run = { tenant: 't', runId: 'r' };
    const output = 'o'.repeat(5_000);
    const args = { text: 'a'.repeat(5_000) };
    const [content, argsBody] = [await writer.encode(run, output), await writer.encode(run, args)];
    expect([content.kind, argsBody.kind]).toEqual(['blob', 'blob']);
    const state = foldLog((await guardedLog()).slice(0, 1));
    state.messages.push(
      { role: 'assistant', text: null, calls: [{ callId: '2-0', providerId: 'p', name: 'echo', args: argsBody }] },
      { role: 'tool', callId: '2-0', providerId: 'p', name: 'echo', isError: false, content },
    );
    const reader = new PayloadCodec({ blobs, redactor: new Redactor() });
    const request = await buildModelRequest(state, reader, 100);
    expect(request.messages.slice(1)).toEqual([
      { role: 'assistant', text: '', calls: [{ callId: '2-0', providerId: 'p', name: 'echo', args }] },
      { role: 'tool', callId: '2-0', providerId: 'p', name: 'echo', isError: false, content: output },
    ]);
    // Kept: the next request does not read the blobs again.
    blobs.remove((content as { key: string }).key);
    blobs.remove((argsBody as { key: string }).key);
    expect((await buildModelRequest(state, reader, 100)).messages).toEqual(request.messages);
  });
});
