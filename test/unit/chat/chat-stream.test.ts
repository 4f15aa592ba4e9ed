// GET /runs/{id}/chat's translation of a run into the AI SDK's UI message stream: the parts of a
// message (steps, text, tool calls with Logbook's call ids, approvals, waits, output), the pause
// at an approval, the replay that takes back text a client was shown but the log does not hold
// (an abandoned attempt, an answer recorded otherwise), and resumption: from every cursor a
// response gave, a reader gets exactly the rest of it.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readUIMessageStream, type UIMessage } from 'ai';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { ChatTranslator } from '../../../lib/api/chat-translate.js';
import { BodyCache, chatSseText, decodeChatCursor, encodeChatCursor, openChat } from '../../../lib/api/chat-read.js';
import type { StreamItem } from '../../../lib/api/stream-merge.js';
import type { LogbookUIChunk } from '../../../lib/chat/ui-chunks.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';

const inline = (value: unknown) => ({ kind: 'inline', value });
let seq = 0;
const ev = (type: string, fields: Record<string, unknown> = {}): StreamItem => {
  seq = typeof fields.seq === 'number' ? fields.seq : seq + 1;
  return { type: 'event', cursor: `${seq}.0.0.-1`, event: { seq, type, ...fields } };
};
const txt = (callSeq: number, index: number, text: string): StreamItem => ({
  type: 'text',
  cursor: `${callSeq}.${callSeq}.1.${index}`,
  callSeq,
  attempt: 1,
  index,
  text,
});

function translate(items: StreamItem[]) {
  const t = new ChatTranslator('r', new BodyCache());
  const steps = items.map((i) => t.apply(i));
  return { t, chunks: steps.flatMap((s) => s.chunks), ends: steps.map((s) => s.end) };
}

async function assemble(chunks: LogbookUIChunk[]): Promise<UIMessage> {
  const stream = new ReadableStream({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream: stream as never, terminateOnError: true })) last = m;
  return last!;
}

describe('the chat translator', () => {
  it('a turn: streamed text completed by the response, a tool call and its result, structured output, finish', async () => {
    seq = 0;
    const { chunks, ends } = translate([
      ev('run_started'),
      ev('model_started'),
      txt(2, 0, 'Looking '),
      ev('model_response', { text: inline('Looking it up.'), calls: [{ callId: '3-0', providerId: 'p', name: 'lookup', args: inline({ id: 7 }) }] }),
      ev('tool_started', { callId: '3-0' }),
      ev('tool_result', { callId: '3-0', ok: true, output: inline({ found: true }), reservation: { step: 2 } }),
      ev('model_response', { text: inline('Found it.'), calls: [] }),
      ev('run_completed', { answer: inline('Found it.'), output: inline({ ok: 1 }) }),
    ]);
    expect(ends.at(-1)).toBe('finish');
    expect(chunks.map((c) => c.type)).toEqual([
      'start',
      'start-step',
      'text-start',
      'text-delta',
      'text-delta',
      'text-end',
      'tool-input-available',
      'tool-output-available',
      'finish-step',
      'start-step',
      'text-start',
      'text-delta',
      'text-end',
      'finish-step',
      'data-output',
      'finish',
    ]);
    const m = await assemble(chunks);
    expect(m.id).toBe('r:1');
    expect(m.parts).toMatchObject([
      { type: 'step-start' },
      { type: 'text', text: 'Looking it up.' },
      { type: 'tool-lookup', toolCallId: '3-0', state: 'output-available', input: { id: 7 }, output: { found: true } },
      { type: 'step-start' },
      { type: 'text', text: 'Found it.' },
      { type: 'data-output', data: { ok: 1 } },
    ]);
  });

  it('pauses at an approval with nothing else running; a rejection denies the call and its error result is not shown', async () => {
    seq = 0;
    const items = [
      ev('run_started'),
      ev('model_started'),
      ev('model_response', {
        text: inline('Refunding.'),
        calls: [
          { callId: '3-0', providerId: 'p', name: 'refund', args: inline({ eur: 42 }) },
          { callId: '3-1', providerId: 'p', name: 'note', args: inline({}) },
        ],
      }),
      ev('approval_requested', { callId: '3-0', argsHash: 'a'.repeat(64) }),
    ];
    const t = new ChatTranslator('r', new BodyCache());
    const before = items.flatMap((i) => t.apply(i).chunks);
    expect(t.paused).toBe(false); // 3-1 has no result yet
    before.push(...t.apply(ev('tool_result', { callId: '3-1', ok: true, output: inline('noted') })).chunks);
    expect(t.paused).toBe(true);
    const paused = await assemble([...before, ...t.pauseChunks()]);
    expect(paused.parts.find((p) => p.type === 'tool-refund')).toMatchObject({ state: 'approval-requested', approval: { id: '3-0' } });
    expect(paused.parts.find((p) => p.type === 'data-approval')).toMatchObject({
      id: '3-0',
      data: { tool: 'refund', input: { eur: 42 }, status: 'requested' },
    });
    const after = [
      ev('approval_decided', { callId: '3-0', decision: 'reject', argsHash: 'a'.repeat(64), comment: 'too much', decidedBy: 'me' }),
      ev('tool_result', { callId: '3-0', ok: false, output: inline('rejected: too much'), reservation: { step: 2 } }),
    ].flatMap((i) => t.apply(i).chunks);
    expect(t.paused).toBe(false);
    expect(after.map((c) => c.type)).toEqual(['tool-output-denied', 'data-approval', 'finish-step']);
    const m = await assemble([...before, ...after]);
    expect(m.parts.find((p) => p.type === 'tool-refund')).toMatchObject({ state: 'output-denied' });
    expect(m.parts.find((p) => p.type === 'data-approval')).toMatchObject({ data: { status: 'rejected', comment: 'too much' } });
  });

  it('a discard of text already sent ends the response for a replay; a replay from the log has only the retry', async () => {
    seq = 0;
    const live = translate([ev('run_started'), ev('model_started'), txt(2, 0, 'Abandoned half'), { type: 'discard', cursor: '2.0.1.-1', callSeq: 2 }]);
    expect(live.ends.at(-1)).toBe('replay');
    expect(live.chunks.slice(-3).map((c) => c.type)).toEqual(['text-end', 'finish-step', 'data-replay']);
    seq = 0;
    const replay = translate([
      ev('run_started'),
      ev('model_started'),
      { type: 'discard', cursor: '2.0.1.-1', callSeq: 2 },
      ev('model_started'),
      ev('model_response', { text: inline('The retry.'), calls: [] }),
      ev('run_completed', { answer: inline('The retry.') }),
    ]);
    expect(replay.ends).not.toContain('replay');
    expect((await assemble(replay.chunks)).parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual(['The retry.']);
  });

  it('text that streamed otherwise than the log recorded it (redacted) is replayed: the log wins', () => {
    seq = 0;
    const { chunks, ends } = translate([
      ev('run_started'),
      ev('model_started'),
      txt(2, 0, 'Card 4111 1111'),
      ev('model_response', { text: inline('Card [REDACTED:card]'), calls: [] }),
    ]);
    expect(ends.at(-1)).toBe('replay');
    expect(chunks.filter((c) => c.type === 'text-delta').map((c) => (c as { delta: string }).delta)).toEqual(['Card 4111 1111', 'Card [REDACTED:card]']);
  });

  it('a durable wait shows as a data part that the result completes; a follow-up cuts the open message', () => {
    seq = 0;
    const t = new ChatTranslator('r', new BodyCache());
    const out = [
      ev('run_started'),
      ev('model_started'),
      ev('model_response', { text: null, calls: [{ callId: '3-0', providerId: 'p', name: 'await_payment', args: inline({}) }] }),
      ev('tool_started', { callId: '3-0', wait: { kind: 'signal', signal: 'paid', until: Date.UTC(2030, 0, 1) } }),
    ].flatMap((i) => t.apply(i).chunks);
    expect(out.at(-1)).toEqual({
      type: 'data-wait',
      id: '3-0',
      data: { callId: '3-0', tool: 'await_payment', kind: 'signal', signal: 'paid', until: '2030-01-01T00:00:00.000Z', status: 'waiting' },
    });
    expect(t.paused).toBe(false);
    const cut = t.apply(ev('user_message', { input: inline('hello?') }));
    expect(cut.end).toBe('cut');
    expect(cut.chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'other' });
    expect(t.turn).toBe(0);
  });
});

describe('chat cursors', () => {
  it('encode and decode, and refuse what no response gave', () => {
    const p = { origin: 4, position: { seq: 9, open: 8, unanswered: 1, index: 3 } };
    expect(decodeChatCursor(encodeChatCursor(p))).toEqual(p);
    for (const bad of ['', '1.2.0.0', '10.9.8.1.3', '1.2.0.0.5', 'a.b.c.d.e']) expect(decodeChatCursor(bad)).toBeUndefined();
  });

  it('from every id of a response, the rest of it is exactly what follows that id', async () => {
    const lookup = defineTool({
      name: 'lookup',
      version: '1',
      description: 'Look up.',
      input: z.object({ q: z.string() }),
      policy: 'rerun',
      timeoutMs: 1_000,
      async execute({ q }) {
        return { q, hits: 3 };
      },
    });
    const s = scriptedWorld({ tools: [lookup], script: [{ text: 'Searching.', calls: [{ name: 'lookup', args: { q: 'mug' } }] }, { text: 'Three mugs.' }] });
    await startRun(s.worker.deps, { ...s.run, agent: 'agent', input: 'mugs?' });
    await driveRun(s.world, s.run, { worker: () => s.worker });
    const deps = s.worker.deps;
    const read = async (request: Parameters<typeof openChat>[2]) => {
      const session = await openChat(deps, s.run, request);
      if (session.kind === 'none') return 'none';
      let text = '';
      for await (const part of chatSseText(deps, session, { maxMs: 1_000, signal: new AbortController().signal })) text += part;
      return text;
    };
    const whole = (await read({ from: 0 })) as string;
    const ids = [...whole.matchAll(/^id: (.+)$/gm)].map((m) => m[1]!);
    expect(ids.length).toBeGreaterThan(4);
    // The last id ends the message: after it, a reader waits for the next turn.
    for (const id of ids.slice(0, -1)) {
      const rest = whole.slice(whole.indexOf(`id: ${id}\n`));
      expect(await read({ after: id })).toBe(rest.slice(rest.indexOf('\n\n') + 2));
    }
    expect(await read({ after: ids[2]!, replay: true })).toBe(whole);
    expect(await read({})).toBe('none'); // the run is finished: nothing to reconnect to
  });
});
