import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../../lib/core/messages.js';
import { DEFAULT_SCRIPTED_PACE, LOCAL_SCRIPTED_PACE_MS, SCRIPTED_PACE_ENV, ScriptedModel, scriptedChunks, type ScriptStep } from '../../../lib/models/scripted-model.js';
import type { Clock } from '../../../lib/ports/clock.js';
import { InstantClock } from './fixture-server.js';
import { seeded } from './model-outputs.js';
import { firstTurn } from './sample-requests.js';

const TEXT = 'The report is ready: 3 invoices are overdue, totalling 4,210.50 EUR. I drafted a reminder for each customer.';

const script: ScriptStep[] = [
  {
    text: 'Looking up both invoices.',
    calls: [
      { name: 'get_invoice', args: { invoiceId: 'INV-1042' } },
      { name: 'get_invoice', args: { invoiceId: 'INV-1043' } },
    ],
  },
  { text: TEXT },
];

const second: ModelRequest = {
  ...firstTurn,
  messages: [...firstTurn.messages, { role: 'assistant', text: 'Looking up both invoices.', calls: [] }, { role: 'user', content: 'go on' }],
};

/** A clock whose sleeps wait until the test releases them or the signal aborts. */
class GateClock implements Clock {
  readonly waits: { ms: number; release: () => void }[] = [];
  private waiter: (() => void) | undefined;
  now(): number {
    return 0;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      this.waits.push({ ms, release: resolve });
      this.waiter?.();
    });
  }
  waiting(n: number): Promise<void> {
    if (this.waits.length >= n) return Promise.resolve();
    return new Promise((resolve) => (this.waiter = () => this.waits.length >= n && resolve()));
  }
}

describe('ScriptedModel streaming (onText)', () => {
  it('hands out the text in chunks (about three words) at the pace of LOGBOOK_SCRIPTED_PACE_MS through its clock, and the response is the same', async () => {
    expect(DEFAULT_SCRIPTED_PACE).toEqual({ chunkChars: 16, delayMs: 0 });
    const clock = new InstantClock();
    process.env[SCRIPTED_PACE_ENV] = String(LOCAL_SCRIPTED_PACE_MS);
    let streamed: ScriptedModel;
    try {
      streamed = new ScriptedModel(script, { clock });
    } finally {
      delete process.env[SCRIPTED_PACE_ENV];
    }
    const deltas: string[] = [];
    const response = await streamed.complete(second, { signal: new AbortController().signal, onText: (d) => deltas.push(d) });
    const plain = await new ScriptedModel(script).complete(second, { signal: new AbortController().signal });
    expect(response).toEqual(plain);
    expect(deltas.join('')).toBe(TEXT);
    expect(deltas).toEqual(scriptedChunks(TEXT, 16));
    expect(deltas.length).toBeGreaterThan(4);
    // Whole words, about three per chunk.
    for (const d of deltas.slice(0, -1)) {
      expect(d).toMatch(/\s$/);
      expect(d.trim().split(/\s+/).length).toBeGreaterThanOrEqual(2);
    }
    expect(clock.sleeps).toEqual(Array(deltas.length - 1).fill(40));
    // Without the variable: the same chunks, no waits (tests that stream stay fast).
    const instant = new InstantClock();
    await new ScriptedModel(script, { clock: instant }).complete(second, { signal: new AbortController().signal, onText: () => undefined });
    expect(instant.sleeps).toEqual([]);
  });

  it('streams a turn with tool calls too (its text), and gives the same calls and usage', async () => {
    const deltas: string[] = [];
    const model = new ScriptedModel(script, { clock: new InstantClock(), pace: { chunkChars: 4, delayMs: 5 } });
    const response = await model.complete(firstTurn, { signal: new AbortController().signal, onText: (d) => deltas.push(d) });
    expect(response).toEqual(await new ScriptedModel(script).complete(firstTurn, { signal: new AbortController().signal }));
    expect(deltas).toEqual(['Looking ', 'up both ', 'invoices', '.']); // a word past twice the size is cut
  });

  it('with a delay of 0 sends every chunk without sleeping; without onText it never sleeps', async () => {
    const clock = new InstantClock();
    const deltas: string[] = [];
    await new ScriptedModel(script, { clock, pace: { delayMs: 0 } }).complete(second, { signal: new AbortController().signal, onText: (d) => deltas.push(d) });
    expect(deltas.join('')).toBe(TEXT);
    await new ScriptedModel(script, { clock }).complete(second, { signal: new AbortController().signal });
    expect(clock.sleeps).toEqual([]);
  });

  it('an abort between two chunks stops the stream with the signal reason', async () => {
    const clock = new GateClock();
    const controller = new AbortController();
    const deltas: string[] = [];
    const call = new ScriptedModel(script, { clock, pace: { delayMs: 40 } }).complete(second, { signal: controller.signal, onText: (d) => deltas.push(d) });
    await clock.waiting(1);
    clock.waits[0]!.release();
    await clock.waiting(2);
    const reason = new Error('lease lost');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(deltas).toEqual(scriptedChunks(TEXT, 16).slice(0, 2));
  });

  it('a throwing onText does not fail the call', async () => {
    let calls = 0;
    const response = await new ScriptedModel(script, { clock: new InstantClock() }).complete(second, {
      signal: new AbortController().signal,
      onText: () => {
        calls++;
        throw new Error('preview broke');
      },
    });
    expect(response.text).toBe(TEXT);
    expect(calls).toBe(scriptedChunks(TEXT, 16).length);
  });
});

describe('scriptedChunks', () => {
  it('over random texts and sizes: chunks join back to the text, are never empty, and never split a surrogate pair', () => {
    const random = seeded(3);
    const alphabet = ['a', 'bc', ' ', '  ', '\n', 'é', '日本', '😀', '🧾x', 'word', '\t', 'longwordwithoutspaces'];
    for (let k = 0; k < 300; k++) {
      const text = Array.from({ length: Math.floor(random() * 60) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      const size = 1 + Math.floor(random() * 20);
      const chunks = scriptedChunks(text, size);
      expect(chunks.join('')).toBe(text);
      for (const c of chunks) {
        expect(c.length).toBeGreaterThan(0);
        expect(c).not.toMatch(/[\uD800-\uDBFF]$/);
        expect(c).not.toMatch(/^[\uDC00-\uDFFF]/);
      }
      // Every chunk but the last holds at least `size` characters.
      for (const c of chunks.slice(0, -1)) expect(c.length).toBeGreaterThanOrEqual(size);
    }
  });

  it('cuts text without whitespace at twice the size', () => {
    expect(scriptedChunks('x'.repeat(10), 2)).toEqual(['xxxx', 'xxxx', 'xx']);
    expect(scriptedChunks('', 16)).toEqual([]);
  });
});
