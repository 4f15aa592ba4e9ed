// The AI SDK adapter with onText: `doStream` of two published provider packages (specification
// v3 and v2) against the local fake OpenAI-compatible server; then hand-written models for what
// no published package does (no doStream, V1's textDelta, tool input without a tool-call part).
import { createOpenAICompatible as createV3 } from '@ai-sdk/openai-compatible';
import { createOpenAICompatible as createV2 } from 'ai-sdk-openai-compatible-v1';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelError } from '../../../lib/core/errors.js';
import { aiSdkModel, type AiSdkLanguageModel, type AiSdkModelClient } from '../../../lib/models/ai-sdk-model.js';
import { InstantClock, startFixtureServer, type FixtureServer, type Reply } from './fixture-server.js';
import { openAiAnswer, openAiChunks, openAiStream, randomOutputs, seeded, type ModelOutput } from './model-outputs.js';
import { firstTurn } from './sample-requests.js';

let server: FixtureServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

// `includeUsage` makes the provider ask for usage in the stream (OpenAI sends none otherwise).
const PROVIDERS = [
  { spec: 'v3', create: (baseURL: string) => createV3({ name: 'fake', baseURL, apiKey: 'sk-fake', includeUsage: true }).chatModel('gpt-4.1-mini') },
  { spec: 'v2', create: (baseURL: string) => createV2({ name: 'fake', baseURL, apiKey: 'sk-fake', includeUsage: true }).chatModel('gpt-4.1-mini') },
] as const;

const RETRY = { maxAttempts: 3, baseDelayMs: 1000, maxDelayMs: 8000, maxTotalMs: 30_000 };

async function client(spec: (typeof PROVIDERS)[number], replies: Reply[]) {
  server = await startFixtureServer(replies);
  const model = aiSdkModel(spec.create(`${server.url}/v1`), { clock: new InstantClock(), random: () => 0.5, retry: RETRY });
  return { server, model };
}

const request = (model: AiSdkModelClient) => ({ ...firstTurn, modelId: model.id });

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

describe.each(PROVIDERS)('doStream of a published AI SDK provider (specification $spec)', (spec) => {
  it('gives the same ModelResponse as doGenerate for the same output, over random outputs and frame splits', async () => {
    const outputs = randomOutputs(10, 57);
    const random = seeded(5);
    const { server, model } = await client(
      spec,
      outputs.flatMap((o) => [openAiAnswer(o), openAiStream(o, { random })]),
    );
    for (const [i, output] of outputs.entries()) {
      const plain = await model.complete(request(model), { signal: new AbortController().signal });
      const { deltas, onText } = collect();
      const response = await model.complete(request(model), { signal: new AbortController().signal, onText });
      expect(response, `output ${i}`).toEqual(plain);
      expect(deltas.join(''), `output ${i}`).toBe(plain.text);
      expect(plain.text).toBe(output.text.join(''));
      expect(plain.calls.map((c) => c.args)).toEqual(output.calls.map((c) => JSON.parse(c.args.join('')) as unknown));
    }
    // doGenerate asks without streaming, doStream with it: the provider's own request, unchanged otherwise.
    expect(JSON.parse(server.requests[0]!.body)).not.toHaveProperty('stream', true);
    expect(JSON.parse(server.requests[1]!.body)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('streams text as it arrives, and an abort stops the stream at once', async () => {
    const chunks = openAiChunks(simple).slice(0, 3);
    const { model } = await client(spec, [{ ...openAiStream(simple, { chunks }), then: 'hang' }]);
    const controller = new AbortController();
    const seen: string[] = [];
    let two: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (two = resolve));
    const call = model.complete(request(model), {
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
    const chunks = openAiChunks(simple).slice(0, 3);
    const { server, model } = await client(spec, [{ ...openAiStream(simple, { chunks }), then: 'break' }, openAiStream(simple)]);
    const { deltas, onText } = collect();
    const error = await rejection(model.complete(request(model), { signal: new AbortController().signal, onText }));
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ code: 'model_unavailable', retryable: true });
    expect(deltas).toEqual(['The report ', 'is ready: ']);
    expect(server.requests).toHaveLength(1);
  });

  it('a stream that ends without a finish reason before any text is retried inside the call', async () => {
    const { server, model } = await client(spec, [openAiStream(simple, { chunks: openAiChunks(simple).slice(0, 1) }), openAiStream(simple)]);
    const { deltas, onText } = collect();
    const response = await model.complete(request(model), { signal: new AbortController().signal, onText });
    expect(server.requests).toHaveLength(2);
    expect(response.text).toBe('The report is ready: 3 invoices are overdue.');
    expect(deltas.join('')).toBe(response.text);
  });

  it('a throwing onText does not fail the call or change the response', async () => {
    const { model } = await client(spec, [openAiAnswer(simple), openAiStream(simple)]);
    const plain = await model.complete(request(model), { signal: new AbortController().signal });
    const response = await model.complete(request(model), {
      signal: new AbortController().signal,
      onText: () => {
        throw new Error('preview broke');
      },
    });
    expect(response).toEqual(plain);
  });

  it('HTTP errors of doStream map as those of doGenerate: a 500 is retried, a 401 is final', async () => {
    const serverError = {
      status: 500,
      headers: { 'content-type': 'application/json' },
      body: { error: { message: 'The server had an error', type: 'server_error' } },
    };
    const auth = {
      status: 401,
      headers: { 'content-type': 'application/json' },
      body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } },
    };
    const { server, model } = await client(spec, [serverError, openAiStream(simple), auth]);
    const response = await model.complete(request(model), { signal: new AbortController().signal, onText: () => undefined });
    expect(response.text).toBe('The report is ready: 3 invoices are overdue.');
    expect(server.requests).toHaveLength(2);
    expect(await rejection(model.complete(request(model), { signal: new AbortController().signal, onText: () => undefined }))).toMatchObject({
      code: 'model_auth',
      retryable: false,
    });
  });
});

/** A hand-written model: doGenerate answers `generate`; doStream (when given) streams `parts`. */
function handModel(version: string, generate: unknown, parts?: unknown[]): AiSdkLanguageModel & { streamed: number; generated: number } {
  const model = {
    specificationVersion: version,
    provider: 'hand.chat',
    modelId: 'm',
    streamed: 0,
    generated: 0,
    doGenerate: () => {
      model.generated++;
      return Promise.resolve(generate);
    },
    ...(parts
      ? {
          doStream: () => {
            model.streamed++;
            return Promise.resolve({
              stream: new ReadableStream({
                start(controller) {
                  for (const p of parts) controller.enqueue(p);
                  controller.close();
                },
              }),
            });
          },
        }
      : {}),
  };
  return model;
}

const generated = {
  content: [
    { type: 'text', text: 'Two invoices.' },
    { type: 'tool-call', toolCallId: 'c1', toolName: 'get_invoice', input: '{"invoiceId":"INV-1"}' },
  ],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage: { inputTokens: { total: 12 }, outputTokens: { total: 5 } },
};

describe('doStream of hand-written models', () => {
  it('a model without doStream answers through doGenerate, and onText gets the text whole', async () => {
    const lm = handModel('v3', generated);
    const model = aiSdkModel(lm);
    const { deltas, onText } = collect();
    const response = await model.complete(request(model), { signal: new AbortController().signal, onText });
    expect(lm.generated).toBe(1);
    expect(deltas).toEqual(['Two invoices.']);
    expect(response.calls).toEqual([{ providerId: 'c1', name: 'get_invoice', args: { invoiceId: 'INV-1' } }]);
  });

  it('without onText doStream is never called (the engine calls without it until streaming is wired)', async () => {
    const lm = handModel('v3', generated, [{ type: 'finish' }]);
    const model = aiSdkModel(lm);
    await model.complete(request(model), { signal: new AbortController().signal });
    expect([lm.generated, lm.streamed]).toEqual([1, 0]);
  });

  it("reads V1's textDelta, and assembles a call from tool-input parts when no tool-call part follows", async () => {
    const parts = [
      { type: 'stream-start', warnings: [] },
      { type: 'text-delta', textDelta: 'Two ' },
      { type: 'text-delta', id: 't', delta: 'invoices.' },
      { type: 'tool-input-start', id: 'c1', toolName: 'get_invoice' },
      { type: 'tool-input-delta', id: 'c1', delta: '{"invoiceId":' },
      { type: 'tool-input-delta', id: 'c1', delta: '"INV-1"}' },
      { type: 'tool-input-end', id: 'c1' },
      { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: { inputTokens: { total: 12 }, outputTokens: { total: 5 } } },
    ];
    const lm = handModel('v3', generated, parts);
    const model = aiSdkModel(lm);
    const { deltas, onText } = collect();
    const response = await model.complete(request(model), { signal: new AbortController().signal, onText });
    const plain = await aiSdkModel(handModel('v3', generated)).complete(request(model), { signal: new AbortController().signal });
    expect(response).toEqual(plain);
    expect(deltas).toEqual(['Two ', 'invoices.']);
  });

  it('an abort stops a stream whose provider ignores the abort signal (the reader is cancelled)', async () => {
    let cancelled = false;
    const lm = {
      specificationVersion: 'v3',
      provider: 'hand.chat',
      modelId: 'm',
      doGenerate: () => Promise.reject(new Error('not used')),
      doStream: () =>
        Promise.resolve({
          stream: new ReadableStream({
            start(controller) {
              controller.enqueue({ type: 'text-delta', id: 't', delta: 'Half an answer' }); // and then nothing, ever
            },
            cancel() {
              cancelled = true;
            },
          }),
        }),
    };
    const model = aiSdkModel(lm);
    const controller = new AbortController();
    const seen: string[] = [];
    let first: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (first = resolve));
    const call = model.complete(request(model), {
      signal: controller.signal,
      onText: (d) => {
        seen.push(d);
        first();
      },
    });
    await reached;
    expect(seen).toEqual(['Half an answer']);
    const reason = new Error('model timeout');
    controller.abort(reason);
    expect(await rejection(call)).toBe(reason);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cancelled).toBe(true);
  });

  it('a stream without a finish part broke: retried while no text went out, then model_unavailable, retryable', async () => {
    const lm = handModel('v3', generated, [{ type: 'tool-input-start', id: 'c1', toolName: 'get_invoice' }]);
    const model = aiSdkModel(lm, { clock: new InstantClock(), random: () => 0.5, retry: RETRY });
    const error = await rejection(model.complete(request(model), { signal: new AbortController().signal, onText: () => undefined }));
    expect(lm.streamed).toBe(3);
    expect(error).toMatchObject({ code: 'model_unavailable', retryable: true });
    expect((error as Error).message).toMatch(/no finish part/);
  });
});
