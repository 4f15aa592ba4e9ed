// The Bedrock adapter with onText: ConverseStream through the real SDK client (HTTP/2, SigV4,
// its event-stream decoder) against the local fake server speaking AWS's event-stream framing.
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelError } from '../../../lib/core/errors.js';
import { BedrockConverseClient } from '../../../lib/models/bedrock-converse.js';
import { InstantClock, startFixtureServer, type FixtureServer, type Reply } from './fixture-server.js';
import { converseAnswer, converseEvents, converseStream, eventMessage, randomOutputs, seeded, type ModelOutput } from './model-outputs.js';
import { firstTurn } from './sample-requests.js';

const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
let server: FixtureServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(replies: Reply[]) {
  server = await startFixtureServer(replies, 'h2c');
  const sdk = new BedrockRuntimeClient({
    endpoint: server.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDLOGBOOKTEST', secretAccessKey: 'logbook-test-secret' },
    maxAttempts: 1,
  });
  const client = new BedrockConverseClient({
    client: sdk,
    modelId: MODEL,
    clock: new InstantClock(),
    random: () => 0.5,
    retry: { maxAttempts: 4, baseDelayMs: 1000, maxDelayMs: 8000, maxTotalMs: 30_000 },
  });
  return { server, client };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

const simple: ModelOutput = {
  text: ['The report ', 'is ready: ', '3 invoices ', 'are overdue.'],
  calls: [],
  finish: 'stop',
  usage: { input: 1287, output: 24 },
};

const collect = () => {
  const deltas: string[] = [];
  return { deltas, onText: (d: string) => deltas.push(d) };
};

describe('BedrockConverseClient streaming (onText)', () => {
  it('gives the same ModelResponse as Converse for the same output, over random outputs and random frame splits', async () => {
    const outputs = randomOutputs(12, 31);
    const random = seeded(11);
    const replies = outputs.flatMap((o, i) => [converseAnswer(o), converseStream(converseEvents(o), i % 2 === 0 ? { random } : {})]);
    const { server, client } = await setup(replies);
    for (const [i, output] of outputs.entries()) {
      const plain = await client.complete(firstTurn, { signal: new AbortController().signal });
      const { deltas, onText } = collect();
      const response = await client.complete(firstTurn, { signal: new AbortController().signal, onText });
      expect(response, `output ${i}`).toEqual(plain);
      expect(deltas.join(''), `output ${i}`).toBe(plain.text);
      expect(deltas).toEqual(output.text.filter((t) => t !== ''));
      expect(plain.calls.map((c) => c.args)).toEqual(output.calls.map((c) => JSON.parse(c.args.join('')) as unknown));
    }
    // Same input, to the streaming operation; the non-streaming path is unchanged.
    expect(decodeURIComponent(server.requests[0]!.url)).toBe(`/model/${MODEL}/converse`);
    expect(decodeURIComponent(server.requests[1]!.url)).toBe(`/model/${MODEL}/converse-stream`);
    expect(JSON.parse(server.requests[1]!.body)).toEqual(JSON.parse(server.requests[0]!.body));
  });

  it('joins text blocks around a tool call with a newline, in the preview as in the response; a tool without input gets {}', async () => {
    const p = 'pad';
    const events = [
      eventMessage('messageStart', { p, role: 'assistant' }),
      eventMessage('contentBlockDelta', { p, contentBlockIndex: 0, delta: { text: 'Looking it up.' } }),
      eventMessage('contentBlockStop', { p, contentBlockIndex: 0 }),
      eventMessage('contentBlockStart', { p, contentBlockIndex: 1, start: { toolUse: { toolUseId: 'tooluse_1', name: 'list_overdue' } } }),
      eventMessage('contentBlockStop', { p, contentBlockIndex: 1 }),
      eventMessage('contentBlockDelta', { p, contentBlockIndex: 2, delta: { text: 'Then' } }),
      eventMessage('contentBlockDelta', { p, contentBlockIndex: 2, delta: { text: ' more.' } }),
      eventMessage('contentBlockStop', { p, contentBlockIndex: 2 }),
      eventMessage('messageStop', { p, stopReason: 'tool_use' }),
      eventMessage('metadata', { p, usage: { inputTokens: 10, outputTokens: 7, totalTokens: 17, cacheReadInputTokens: 5 }, metrics: { latencyMs: 3 } }),
    ];
    const { client } = await setup([converseStream(events)]);
    const { deltas, onText } = collect();
    const response = await client.complete(firstTurn, { signal: new AbortController().signal, onText });
    expect(response).toEqual({
      text: 'Looking it up.\nThen more.',
      calls: [{ providerId: 'tooluse_1', name: 'list_overdue', args: {} }],
      usage: { inputTokens: 15, outputTokens: 7 },
      stopReason: 'tool_use',
    });
    expect(deltas.join('')).toBe(response.text);
  });

  it('calls onText while the answer arrives, and an abort stops the stream at once', async () => {
    const events = converseEvents(simple).slice(0, 3); // messageStart and two text deltas, then silence
    const { client } = await setup([converseStream(events, { then: 'hang' })]);
    const controller = new AbortController();
    const seen: string[] = [];
    let two: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (two = resolve));
    const call = client.complete(firstTurn, {
      signal: controller.signal,
      onText: (d) => {
        seen.push(d);
        if (seen.length === 2) two();
      },
    });
    await reached;
    expect(seen).toEqual(['The report ', 'is ready: ']);
    const reason = new Error('lease lost');
    controller.abort(reason);
    expect(await rejection(call)).toBe(reason);
  });

  it('a stream that breaks after text was sent is a retryable ModelError, not retried inside the call', async () => {
    const events = converseEvents(simple).slice(0, 3);
    const { server, client } = await setup([converseStream(events, { then: 'break' }), converseStream(converseEvents(simple))]);
    const { deltas, onText } = collect();
    const error = await rejection(client.complete(firstTurn, { signal: new AbortController().signal, onText }));
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: 'model_unavailable', retryable: true });
    expect(deltas).toEqual(['The report ', 'is ready: ']);
    expect(server.requests).toHaveLength(1);
  });

  it('a stream that ends before messageStop, with no text sent yet, is retried inside the call', async () => {
    const { server, client } = await setup([converseStream(converseEvents(simple).slice(0, 1), { then: 'end' }), converseStream(converseEvents(simple))]);
    const { deltas, onText } = collect();
    const response = await client.complete(firstTurn, { signal: new AbortController().signal, onText });
    expect(server.requests).toHaveLength(2);
    expect(deltas.join('')).toBe(response.text);
    expect(response.text).toBe('The report is ready: 3 invoices are overdue.');
  });

  it("maps Bedrock's stream exception events: throttling before text is retried, a model stream error after text is a retryable ModelError, validation is final", async () => {
    const throttled = eventMessage('throttlingException', { message: 'Too many tokens, please wait before trying again.' }, 'exception');
    const streamError = eventMessage('modelStreamErrorException', { message: 'The model failed mid-answer.', originalStatusCode: 500 }, 'exception');
    const invalid = eventMessage('validationException', { message: 'The guardrail configuration is invalid.' }, 'exception');
    const first = converseEvents(simple).slice(0, 2);
    const { server, client } = await setup([
      converseStream([first[0]!, throttled]),
      converseStream([...first, streamError]),
      converseStream([first[0]!, invalid]),
    ]);
    const { deltas, onText } = collect();
    const failed = await rejection(client.complete(firstTurn, { signal: new AbortController().signal, onText }));
    expect(server.requests).toHaveLength(2);
    expect(failed).toMatchObject({ code: 'model_unavailable', retryable: true });
    expect((failed as Error).message).toContain('The model failed mid-answer.');
    expect(deltas).toEqual(['The report ']);
    const final = await rejection(client.complete(firstTurn, { signal: new AbortController().signal, onText: () => undefined }));
    expect(final).toMatchObject({ code: 'model_bad_request', retryable: false });
  });

  it('a throwing onText does not fail the call or change the response', async () => {
    const { client } = await setup([converseAnswer(simple), converseStream(converseEvents(simple))]);
    const plain = await client.complete(firstTurn, { signal: new AbortController().signal });
    let calls = 0;
    const response = await client.complete(firstTurn, {
      signal: new AbortController().signal,
      onText: () => {
        calls++;
        throw new Error('preview broke');
      },
    });
    expect(calls).toBe(4);
    expect(response).toEqual(plain);
  });

  it('HTTP errors before the stream map as without streaming (access denied is final)', async () => {
    const { client } = await setup([
      {
        status: 403,
        headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'AccessDeniedException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
        body: { message: 'You don’t have access to the model.' },
      },
    ]);
    expect(await rejection(client.complete(firstTurn, { signal: new AbortController().signal, onText: () => undefined }))).toMatchObject({
      code: 'model_auth',
      retryable: false,
    });
  });
});
