/**
 * The agents module of `npm run bench -- --stream`: the bench agent with a model that streams its
 * text at a model's pace (STREAM_CHARS characters per call at STREAM_CHARS_PER_S), each piece a
 * marker holding the time it left the model, so a reader can tell how long it took to see it.
 */
import { defineAgents } from '../lib/index.js';
import type { ModelClient } from '../lib/ports/model-client.js';
import { BENCH_MODEL_ID, benchAgent, benchModel } from './bench-agent.js';

/**
 * One piece: `|<epoch ms>|` padded to a fixed width, so the text length is known up front, and
 * ending in a space like a word: the stream's redaction holds back the last word of the text so far
 * (it could still grow into a secret), so text with no space in it would be held to the end.
 */
export const PIECE_CHARS = 16;
export const piece = (at: number) => `${`|${at}|`.padEnd(PIECE_CHARS - 1, '.')} `;

export function streamingModel(turns: number, chars: number, charsPerSecond: number): ModelClient {
  const inner = benchModel(turns);
  const pieces = Math.max(1, Math.round(chars / PIECE_CHARS));
  const paceMs = (PIECE_CHARS / charsPerSecond) * 1000;
  return {
    async complete(request, options) {
      const response = await inner.complete(request, options);
      let text = '';
      const start = Date.now();
      for (let i = 0; i < pieces; i++) {
        // Paced from the start, not from the last piece: timer drift does not slow the stream.
        const wait = start + i * paceMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (options.signal.aborted) throw options.signal.reason;
        const p = piece(Date.now());
        text += p;
        options.onText?.(p);
      }
      return { ...response, text: response.text ? `${text}${response.text}` : text };
    },
  };
}

export default () => {
  const turns = Number(process.env.BENCH_TURNS ?? 3);
  const chars = Number(process.env.BENCH_STREAM_CHARS ?? 800);
  const rate = Number(process.env.BENCH_STREAM_CHARS_PER_S ?? 200);
  return defineAgents({ agents: [benchAgent(turns)], models: { [BENCH_MODEL_ID]: () => streamingModel(turns, chars, rate) } });
};
