// The OpenAI-compatible adapter with onText: `stream: true` against the local fake server, split
// frames, broken and hostile streams, abort; and the SSE reader on its own.
import { afterEach, describe, expect, it } from 'vitest';
import { ModelError } from '../../../lib/core/errors.js';
import type { ModelResponse } from '../../../lib/core/messages.js';
import { OpenAiCompatibleClient } from '../../../lib/models/openai-compatible.js';
import { sseData } from '../../../lib/models/openai-stream.js';
import { InstantClock, startFixtureServer, type FixtureServer, type Reply } from './fixture-server.js';
import { openAiAnswer, openAiChunks, openAiStream, randomOutputs, seeded, sse, type ModelOutput } from './model-outputs.js';
import { firstTurn } from './sample-requests.js';

let server: FixtureServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(replies: Reply[]) {
  server = await startFixtureServer(replies);
  const client = new OpenAiCompatibleClient({
    baseUrl: server.url,
    model: 'gpt-4.1-mini',
    apiKey: 'sk-logbook-test',
    clock: new InstantClock(),
    random: () => 0.5,
    retry: { maxAttempts: 4, baseDelayMs: 1000, maxDelayMs: 8000, maxTotalMs: 30_000 },
  });
  return { server, client };
}

async function streamed(client: OpenAiCompatibleClient, onText?: (d: string) => void, signal = new AbortController().signal) {
  const deltas: string[] = [];
  const response = await client.complete(firstTurn, {
    signal,
    onText: (d) => {
      deltas.push(d);
      onText?.(d);
    },
  });
  return { response, deltas };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

const body = (s: FixtureServer, n: number) => JSON.parse(s.requests[n]?.body ?? 'null') as Record<string, unknown>;

const simple: ModelOutput = {
  text: ['The report ', 'is ready: ', '3 invoices ', 'are overdue.'],
  calls: [],
  finish: 'stop',
  usage: { input: 1287, output: 24 },
};

describe('OpenAiCompatibleClient streaming (onText)', () => {
  it('gives the same ModelResponse as the non-streamed call for the same output, over random outputs and random frame splits', async () => {
    const outputs = randomOutputs(16);
    const random = seeded(7);
    const replies = outputs.flatMap((o) => [openAiAnswer(o), openAiStream(o, { random })]);
    const { server, client } = await setup(replies);
    for (const [i, output] of outputs.entries()) {
      const plain = await client.complete(firstTurn, { signal: new AbortController().signal });
      const { response, deltas } = await streamed(client);
      expect(response, `output ${i}`).toEqual(plain);
      expect(deltas.join(''), `output ${i}`).toBe(plain.text);
      expect(plain.text).toBe(output.text.join(''));
      expect(plain.calls.map((c) => c.args)).toEqual(output.calls.map((c) => JSON.parse(c.args.join('')) as unknown));
      // Each delta the model wrote reaches onText as it came (none merged, none dropped).
      expect(deltas).toEqual(output.text.filter((t) => t !== ''));
    }
    // The non-streaming request is unchanged; the streaming one asks for SSE with usage.
    expect(body(server, 0).stream).toBe(false);
    expect(body(server, 0)).not.toHaveProperty('stream_options');
    expect(server.requests[0]!.headers.accept).toBe('application/json');
    expect(body(server, 1)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(server.requests[1]!.headers.accept).toBe('text/event-stream');
    const { stream: _s, stream_options: _o, ...rest1 } = body(server, 1);
    const { stream: _s0, ...rest0 } = body(server, 0);
    expect(rest1).toEqual(rest0);
  });

  it('calls onText while the answer is still arriving, and an abort stops the stream at once', async () => {
    const chunks = openAiChunks(simple).slice(0, 3); // role, then two text deltas; then the server goes quiet
    const { server, client } = await setup([{ ...openAiStream(simple, { chunks }), then: 'hang' }]);
    const controller = new AbortController();
    const seen: string[] = [];
    let resolveTwo: () => void = () => undefined;
    const two = new Promise<void>((resolve) => (resolveTwo = resolve));
    const call = client.complete(firstTurn, {
      signal: controller.signal,
      onText: (d) => {
        seen.push(d);
        if (seen.length === 2) resolveTwo();
      },
    });
    await two;
    expect(seen).toEqual(['The report ', 'is ready: ']);
    const reason = new Error('lease lost');
    controller.abort(reason);
    expect(await rejection(call)).toBe(reason);
    expect(server.requests).toHaveLength(1);
  });

  it('a stream that breaks after text was sent is a retryable ModelError, not retried inside the call', async () => {
    const chunks = openAiChunks(simple).slice(0, 3);
    const { server, client } = await setup([{ ...openAiStream(simple, { chunks }), then: 'break' }, openAiStream(simple)]);
    const seen: string[] = [];
    const error = await rejection(client.complete(firstTurn, { signal: new AbortController().signal, onText: (d) => seen.push(d) }));
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: 'model_unavailable', retryable: true });
    expect((error as Error).message).toMatch(/stream broke/);
    expect(seen).toEqual(['The report ', 'is ready: ']);
    // The text already shown is not sent again by a hidden retry: the engine's next attempt is a new call.
    expect(server.requests).toHaveLength(1);
  });

  it('a stream that ends early (no finish, no [DONE]) is retried inside the call while no text went out', async () => {
    const noText: ModelOutput = {
      text: [],
      calls: [{ id: 'call_1', name: 'get_invoice', args: ['{"invoiceId":', '"INV-1042"}'] }],
      finish: 'tool_calls',
      usage: { input: 10, output: 5 },
    };
    const cut = openAiChunks(noText).slice(0, 3); // the call started, its arguments half sent
    const { server, client } = await setup([{ ...openAiStream(noText, { chunks: cut }), then: 'end' }, openAiStream(noText)]);
    const { response, deltas } = await streamed(client);
    expect(server.requests).toHaveLength(2);
    expect(deltas).toEqual([]);
    expect(response.calls).toEqual([{ providerId: 'call_1', name: 'get_invoice', args: { invoiceId: 'INV-1042' } }]);
  });

  it('an error event in the stream after text is a retryable ModelError; before text it is retried', async () => {
    const error = JSON.stringify({ error: { message: 'The server had an error while processing your request.', type: 'server_error' } });
    const { server, client } = await setup([
      openAiStream(simple, { chunks: [openAiChunks(simple)[0]!, error] }),
      openAiStream(simple, { chunks: [...openAiChunks(simple).slice(0, 2), error] }),
    ]);
    const seen: string[] = [];
    const failed = await rejection(client.complete(firstTurn, { signal: new AbortController().signal, onText: (d) => seen.push(d) }));
    expect(server.requests).toHaveLength(2);
    expect(failed).toMatchObject({ code: 'model_unavailable', retryable: true });
    expect((failed as Error).message).toContain('The server had an error while processing your request.');
    expect(seen).toEqual(['The report ']);
  });

  it('a throwing or rejecting onText does not fail the call or change the response', async () => {
    const { client } = await setup([openAiAnswer(simple), openAiStream(simple), openAiStream(simple)]);
    const plain = await client.complete(firstTurn, { signal: new AbortController().signal });
    let calls = 0;
    const thrown: ModelResponse = await client.complete(firstTurn, {
      signal: new AbortController().signal,
      onText: () => {
        calls++;
        throw new Error('preview broke');
      },
    });
    expect(calls).toBe(4);
    expect(thrown).toEqual(plain);
    const rejected = await client.complete(firstTurn, {
      signal: new AbortController().signal,
      onText: () => Promise.reject(new Error('async preview broke')) as never,
    });
    expect(rejected).toEqual(plain);
  });

  it('a server that ignores stream: true and answers JSON still answers; onText gets the text whole', async () => {
    const { client } = await setup([openAiAnswer(simple)]);
    const { response, deltas } = await streamed(client);
    expect(deltas).toEqual(['The report is ready: 3 invoices are overdue.']);
    expect(response.usage).toEqual({ inputTokens: 1287, outputTokens: 24 });
  });

  it('HTTP errors before the stream map as without streaming: a 429 is retried, a 400 is final', async () => {
    const { server, client } = await setup([
      {
        status: 429,
        headers: { 'content-type': 'application/json', 'retry-after-ms': '10' },
        body: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } },
      },
      openAiStream(simple),
      { status: 400, headers: { 'content-type': 'application/json' }, body: { error: { message: 'bad tools', type: 'invalid_request_error' } } },
    ]);
    const { response } = await streamed(client);
    expect(response.text).toBe('The report is ready: 3 invoices are overdue.');
    expect(server.requests).toHaveLength(2);
    expect(await rejection(streamed(client))).toMatchObject({ code: 'model_bad_request', retryable: false });
  });

  it('reads calls streamed without an index (Ollama: whole calls, several in one chunk, arguments as an object) in order', async () => {
    const usage = { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 };
    const chunks = [
      JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }),
      JSON.stringify({
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { id: 'call_a', function: { name: 'get_invoice', arguments: '{"invoiceId":"INV-1"}' } },
                { id: 'call_b', function: { name: 'get_invoice', arguments: { invoiceId: 'INV-2' } } },
              ],
            },
          },
        ],
      }),
      JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [{ id: 'call_c', function: { name: 'get_invoice', arguments: '{"invoiceId":' } }] } }] }),
      JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [{ function: { arguments: '"INV-3"}' } }] } }] }),
      JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage }),
      '[DONE]',
    ];
    const { client } = await setup([openAiStream(simple, { chunks })]);
    const { response, deltas } = await streamed(client);
    expect(deltas).toEqual([]);
    expect(response).toEqual({
      text: '',
      calls: [
        { providerId: 'call_a', name: 'get_invoice', args: { invoiceId: 'INV-1' } },
        { providerId: 'call_b', name: 'get_invoice', args: { invoiceId: 'INV-2' } },
        { providerId: 'call_c', name: 'get_invoice', args: { invoiceId: 'INV-3' } },
      ],
      usage: { inputTokens: 50, outputTokens: 20 },
      stopReason: 'tool_use',
    });
  });

  it('a stream without usage ends as the non-streamed answer without usage does: model_invalid_response', async () => {
    const chunks = openAiChunks(simple).filter((c) => !c.includes('"prompt_tokens"'));
    const { client } = await setup([openAiStream(simple, { chunks })]);
    expect(await rejection(streamed(client))).toMatchObject({ code: 'model_invalid_response', retryable: false });
  });
});

async function* bytes(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield new TextEncoder().encode(p);
}

async function collect(source: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const s of source) out.push(s);
  return out;
}

describe('sseData', () => {
  it('reads events split anywhere: CR, LF and CRLF line ends (a CRLF split across chunks too), multi-line data, comments, no final blank line', async () => {
    const events = await collect(
      sseData(bytes(': keep-alive\r', '\ndata: a', 'b\r', '\ndata: c\r\n\r', '\ndata: line1\ndata:line2\n\nevent: x\nid: 1\ndata: 3\r\rdata: last')),
    );
    expect(events).toEqual(['ab\nc', 'line1\nline2', '3', 'last']);
  });

  it('keeps a UTF-8 character split between chunks whole', async () => {
    const encoded = new TextEncoder().encode('data: 😀é\n\n');
    async function* split() {
      for (let i = 0; i < encoded.length; i++) yield encoded.subarray(i, i + 1);
    }
    expect(await collect(sseData(split()))).toEqual(['😀é']);
  });

  it('refuses a line that never ends instead of buffering it: a hostile server cannot grow memory without bound', async () => {
    let sent = 0;
    async function* endless() {
      for (;;) {
        sent++;
        yield new TextEncoder().encode('data: ' + 'x'.repeat(1000));
      }
    }
    const error = await rejection(collect(sseData(endless(), { event: 50_000, total: 10_000_000 })));
    expect(error).toMatchObject({ code: 'model_invalid_response' });
    expect(sent).toBeLessThan(60);
  });

  it('refuses an answer longer than the total cap, even in small well-formed events', async () => {
    let sent = 0;
    async function* endless() {
      for (;;) {
        sent++;
        yield new TextEncoder().encode(sse(['{"choices":[]}']));
      }
    }
    const error = await rejection(collect(sseData(endless(), { event: 1000, total: 100_000 })));
    expect(error).toMatchObject({ code: 'model_invalid_response' });
    expect(sent).toBeLessThan(100_000 / 10);
  });

  it('through the client: a server that never ends its line is refused at MAX_SSE_EVENT_CHARS', async () => {
    const block = new TextEncoder().encode('x'.repeat(256 * 1024));
    const { client } = await setup([
      {
        status: 200,
        headers: { 'content-type': 'text/event-stream' },
        chunks: [new TextEncoder().encode('data: '), ...Array.from({ length: 40 }, () => block)],
        then: 'hang',
      },
    ]);
    const error = await rejection(streamed(client));
    expect(error).toMatchObject({ code: 'model_invalid_response', retryable: false });
    expect((error as Error).message).toMatch(/longer than 4194304 characters/);
  });
});
