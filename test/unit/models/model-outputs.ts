// One model output described once, written in each provider's two wire forms: the answer of the
// non-streaming call and the streamed one (OpenAI's chat.completion.chunk SSE, Bedrock's
// ConverseStream event stream). The streaming tests compare what an adapter makes of each.
import { EventStreamCodec } from '@smithy/core/event-streams';
import type { Fixture, StreamedFixture } from './fixture-server.js';

export interface ModelOutput {
  /** The text as the model writes it, piece by piece (each piece one delta on the wire). */
  text: string[];
  /** Each call's arguments JSON in the pieces it streams in. */
  calls: { id: string; name: string; args: string[] }[];
  finish: 'stop' | 'length' | 'tool_calls';
  usage: { input: number; output: number };
}

/** Deterministic pseudo-random numbers (mulberry32): the same outputs on every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Multi-byte characters, quotes, markup and line breaks: what a split frame must not corrupt.
const WORDS = [
  'The',
  'invoice',
  'INV-1042',
  'is',
  'overdue',
  'héllo',
  'naïve',
  '日本語',
  'テキスト',
  '😀',
  '🧾',
  '"quoted"',
  '<b>bold</b>',
  '\\n',
  'data:',
  '[DONE]',
  '\n',
  '\r\n',
  '{',
  '}',
];

function pieces(text: string, random: () => number): string[] {
  const out: string[] = [];
  const chars = [...text]; // code points: a provider never splits one across deltas
  let i = 0;
  while (i < chars.length) {
    const n = 1 + Math.floor(random() * 12);
    out.push(chars.slice(i, i + n).join(''));
    i += n;
  }
  return out;
}

/** `count` random outputs: text only, calls only, both; several calls; each finish reason. */
export function randomOutputs(count: number, seed = 24): ModelOutput[] {
  const random = seeded(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const outputs: ModelOutput[] = [];
  for (let k = 0; k < count; k++) {
    const words = k % 4 === 1 ? 0 : 1 + Math.floor(random() * 30);
    const text = Array.from({ length: words }, () => pick(WORDS)).join(' ');
    const callCount = k % 4 === 0 ? 0 : Math.floor(random() * 4);
    const calls = Array.from({ length: k % 4 === 1 ? Math.max(1, callCount) : callCount }, (_, i) => {
      const args = { invoiceId: `INV-${1000 + Math.floor(random() * 9000)}`, note: pick(WORDS), lines: random() < 0.5, nested: { n: i, tags: [pick(WORDS)] } };
      return { id: `call_${k}_${i}`, name: 'get_invoice', args: pieces(JSON.stringify(args), random) };
    });
    outputs.push({
      text: pieces(text, random),
      calls,
      finish: calls.length > 0 ? 'tool_calls' : random() < 0.3 ? 'length' : 'stop',
      usage: { input: 100 + Math.floor(random() * 5000), output: 1 + Math.floor(random() * 700) },
    });
  }
  return outputs;
}

/** Bytes cut at random places (inside UTF-8 characters and lines too): one write each. */
export function splitBytes(data: Uint8Array, random: () => number, max = 40): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < data.length;) {
    const n = 1 + Math.floor(random() * max);
    out.push(data.subarray(i, i + n));
    i += n;
  }
  return out;
}

// ---- OpenAI Chat Completions ----

export function openAiAnswer(o: ModelOutput): Fixture {
  const text = o.text.join('');
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: {
      id: 'chatcmpl-stream-test',
      object: 'chat.completion',
      created: 1745012399,
      model: 'gpt-4.1-mini-2025-04-14',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: text === '' && o.calls.length > 0 ? null : text,
            ...(o.calls.length > 0
              ? { tool_calls: o.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args.join('') } })) }
              : {}),
            refusal: null,
          },
          finish_reason: o.finish,
        },
      ],
      usage: { prompt_tokens: o.usage.input, completion_tokens: o.usage.output, total_tokens: o.usage.input + o.usage.output },
    },
  };
}

/** The chunks OpenAI streams for this output, as the `data:` payloads (`[DONE]` last). */
export function openAiChunks(o: ModelOutput): string[] {
  const chunk = (choices: unknown[], usage: unknown = null) =>
    JSON.stringify({ id: 'chatcmpl-stream-test', object: 'chat.completion.chunk', created: 1745012399, model: 'gpt-4.1-mini-2025-04-14', choices, usage });
  const delta = (d: Record<string, unknown>, finish: string | null = null) => chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
  const out = [delta({ role: 'assistant', content: '', refusal: null })];
  for (const piece of o.text) out.push(delta({ content: piece }));
  o.calls.forEach((c, index) => {
    out.push(delta({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }));
    for (const piece of c.args) out.push(delta({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  out.push(delta({}, o.finish));
  out.push(chunk([], { prompt_tokens: o.usage.input, completion_tokens: o.usage.output, total_tokens: o.usage.input + o.usage.output }));
  out.push('[DONE]');
  return out;
}

export const sse = (payloads: string[]): string => payloads.map((p) => `data: ${p}\n\n`).join('');

export function openAiStream(o: ModelOutput, options: { random?: () => number; chunks?: string[]; then?: StreamedFixture['then'] } = {}): StreamedFixture {
  const bytes = new TextEncoder().encode(sse(options.chunks ?? openAiChunks(o)));
  return {
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
    chunks: options.random ? splitBytes(bytes, options.random) : [bytes],
    then: options.then ?? 'end',
  };
}

// ---- Bedrock Converse ----

const CONVERSE_STOP = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' } as const;

export function converseAnswer(o: ModelOutput): Fixture {
  const text = o.text.join('');
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: {
      metrics: { latencyMs: 812 },
      output: {
        message: {
          role: 'assistant',
          content: [
            ...(text === '' ? [] : [{ text }]),
            ...o.calls.map((c) => ({ toolUse: { toolUseId: c.id, name: c.name, input: JSON.parse(c.args.join('')) as unknown } })),
          ],
        },
      },
      stopReason: CONVERSE_STOP[o.finish],
      usage: { inputTokens: o.usage.input, outputTokens: o.usage.output, totalTokens: o.usage.input + o.usage.output },
    },
  };
}

const codec = new EventStreamCodec(
  (s) => new TextDecoder().decode(s),
  (s) => new TextEncoder().encode(s),
);

/** One event-stream message, as Bedrock frames it (`:message-type` event or exception). */
export function eventMessage(type: string, body: unknown, kind: 'event' | 'exception' = 'event'): Uint8Array {
  return codec.encode({
    headers: {
      ':message-type': { type: 'string', value: kind },
      [kind === 'event' ? ':event-type' : ':exception-type']: { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
    },
    body: new TextEncoder().encode(JSON.stringify(body)),
  });
}

/** The ConverseStream events for this output, in Bedrock's order. */
export function converseEvents(o: ModelOutput): Uint8Array[] {
  const p = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ'; // Bedrock pads events to hide their size
  const out = [eventMessage('messageStart', { p, role: 'assistant' })];
  let index = 0;
  if (o.text.length > 0) {
    for (const piece of o.text) out.push(eventMessage('contentBlockDelta', { p, contentBlockIndex: index, delta: { text: piece } }));
    out.push(eventMessage('contentBlockStop', { p, contentBlockIndex: index }));
    index++;
  }
  for (const c of o.calls) {
    out.push(eventMessage('contentBlockStart', { p, contentBlockIndex: index, start: { toolUse: { toolUseId: c.id, name: c.name } } }));
    for (const piece of c.args) out.push(eventMessage('contentBlockDelta', { p, contentBlockIndex: index, delta: { toolUse: { input: piece } } }));
    out.push(eventMessage('contentBlockStop', { p, contentBlockIndex: index }));
    index++;
  }
  out.push(eventMessage('messageStop', { p, stopReason: CONVERSE_STOP[o.finish] }));
  out.push(
    eventMessage('metadata', {
      p,
      usage: { inputTokens: o.usage.input, outputTokens: o.usage.output, totalTokens: o.usage.input + o.usage.output },
      metrics: { latencyMs: 812 },
    }),
  );
  return out;
}

export function converseStream(events: Uint8Array[], options: { random?: () => number; then?: StreamedFixture['then'] } = {}): StreamedFixture {
  const all = Buffer.concat(events);
  return {
    status: 200,
    headers: { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': '0b7d6a3c-2e4f-4d1a-8c5b-9e1f2a3b4c5d' },
    chunks: options.random ? splitBytes(all, options.random, 200) : events,
    then: options.then ?? 'end',
  };
}
