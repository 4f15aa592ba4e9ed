// The function URL's SSE handler (Lambda response streaming), with a stand-in for Lambda's
// `awslambda` global: the tenant is the IAM caller's account, the query and Last-Event-ID are
// validated as the API does, every item of a finished run is one SSE message, and a run of
// another account is a 404 before any stream starts.
import { describe, expect, it } from 'vitest';
import { readStream } from '../../../lib/api/stream-read.js';
import { START_POSITION } from '../../../lib/api/stream-merge.js';
import { streamHandlerFor, type FunctionUrlEvent, type ResponseStream, type StreamingRuntime } from '../../../lib/lambda/stream-handler.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { startRun } from '../../../lib/engine/start-run.js';

const ACCOUNT = '123456789012';

function recorder() {
  const out = { status: 0, headers: {} as Record<string, string>, body: '', ended: false };
  const stream: ResponseStream = { write: (t: string) => (out.body += t), end: () => (out.ended = true) };
  const runtime: StreamingRuntime = {
    streamifyResponse: (h) => h,
    HttpResponseStream: {
      from(s, meta) {
        out.status = meta.statusCode;
        out.headers = meta.headers;
        return s;
      },
    },
  };
  return { out, stream, runtime };
}

const event = (
  path: string,
  query: Record<string, string> = {},
  headers: Record<string, string> = {},
  accountId: string | null = ACCOUNT,
): FunctionUrlEvent => ({
  rawPath: path,
  queryStringParameters: query,
  headers,
  requestContext: { http: { method: 'GET' }, ...(accountId ? { authorizer: { iam: { accountId, userArn: `arn:aws:iam::${accountId}:user/u` } } } : {}) },
});

async function finishedRun() {
  const t = scriptedWorld({ tools: [], script: [{ text: 'All done.' }] });
  const run = { tenant: ACCOUNT, runId: 'r-1' };
  await startRun(t.worker.deps, { ...run, agent: 'agent', input: 'hi' });
  await driveRun(t.world, run, { worker: () => t.worker });
  return { deps: t.worker.deps, run };
}

describe('the streaming function URL handler', () => {
  it('sends every item of a finished run as one SSE message and ends', async () => {
    const { deps, run } = await finishedRun();
    const { out, stream, runtime } = recorder();
    const handler = streamHandlerFor(async () => ({ deps }), runtime);
    await handler(event('/runs/r-1/stream'), stream, { getRemainingTimeInMillis: () => 300_000 });
    expect(out.status).toBe(200);
    expect(out.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(out.ended).toBe(true);
    const expected = await readStream(deps, run, { from: START_POSITION, limit: 500, waitMs: 0, pollMs: 10, finished: true });
    const ids = [...out.body.matchAll(/^id: (.+)$/gm)].map((m) => m[1]);
    expect(ids).toEqual(expected.items.map((i) => i.cursor));
    expect(ids.length).toBeGreaterThan(3);
    // Last-Event-ID resumes after that item.
    const again = recorder();
    await streamHandlerFor(async () => ({ deps }), again.runtime)(event('/runs/r-1/stream', {}, { 'last-event-id': expected.items[1]!.cursor }), again.stream, {
      getRemainingTimeInMillis: () => 300_000,
    });
    expect([...again.out.body.matchAll(/^id: (.+)$/gm)].map((m) => m[1])).toEqual(expected.items.slice(2).map((i) => i.cursor));
  });

  it('refuses what the API refuses: no IAM caller 401, a bad cursor 400, another account 404, another path 404', async () => {
    const { deps } = await finishedRun();
    const call = async (e: FunctionUrlEvent) => {
      const r = recorder();
      await streamHandlerFor(async () => ({ deps }), r.runtime)(e, r.stream, { getRemainingTimeInMillis: () => 300_000 });
      expect(r.out.ended).toBe(true);
      return { status: r.out.status, body: JSON.parse(r.out.body) as { error: { code: string; issues?: { path: string }[] } } };
    };
    expect((await call(event('/runs/r-1/stream', {}, {}, null))).status).toBe(401);
    const bad = await call(event('/runs/r-1/stream', { after: 'nope' }));
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues?.map((i) => i.path)).toEqual(['query.after']);
    expect((await call(event('/runs/r-1/stream', { waitSeconds: '99' }))).status).toBe(400);
    expect((await call(event('/runs/r-1/stream', {}, {}, '210987654321'))).body.error.code).toBe('run_not_found');
    expect((await call(event('/runs/r-1/events'))).status).toBe(404);
  });
});

describe('GET /runs/{id}/chat on the function URL', () => {
  const call = async (deps: Awaited<ReturnType<typeof finishedRun>>['deps'], e: FunctionUrlEvent) => {
    const r = recorder();
    await streamHandlerFor(async () => ({ deps }), r.runtime)(e, r.stream, { getRemainingTimeInMillis: () => 300_000 });
    return r.out;
  };

  it("serves the run as the AI SDK's UI message stream, which the ai package's reader assembles", async () => {
    const { deps } = await finishedRun();
    const out = await call(deps, event('/runs/r-1/chat', { from: '0' }));
    expect(out.status).toBe(200);
    expect(out.headers['x-vercel-ai-ui-message-stream']).toBe('v1');
    expect(out.headers['content-type']).toMatch(/^text\/event-stream/);
    const chunks = out.body
      .split('\n\n')
      .filter((b) => b.includes('data: {'))
      .map((b) => JSON.parse(b.split('\n').find((l) => l.startsWith('data: '))!.slice(6)) as { type: string });
    expect(chunks.map((c) => c.type)).toEqual(['start', 'start-step', 'text-start', 'text-delta', 'text-end', 'finish-step', 'finish']);
    expect(out.body.trim().endsWith('data: [DONE]')).toBe(true);
    const { readUIMessageStream } = await import('ai');
    const stream = new ReadableStream({
      start(c) {
        for (const chunk of chunks) c.enqueue(chunk);
        c.close();
      },
    });
    let message;
    for await (const m of readUIMessageStream({ stream: stream as never, terminateOnError: true })) message = m;
    expect(message).toMatchObject({ id: 'r-1:1', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'text', text: 'All done.', state: 'done' }] });
  });

  it('answers 204 when nothing streams (the run is finished), 400 for a bad query, 404 for another account', async () => {
    const { deps } = await finishedRun();
    expect((await call(deps, event('/runs/r-1/chat'))).status).toBe(204);
    const bad = await call(deps, event('/runs/r-1/chat', { after: '1.2' }));
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.issues[0].path).toBe('query.after');
    expect((await call(deps, event('/runs/r-1/chat', { from: '0' }, {}, '210987654321'))).status).toBe(404);
  });
});
