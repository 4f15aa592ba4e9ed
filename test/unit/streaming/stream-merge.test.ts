// The merge of events and chunks (pure): cursors round-trip and refuse made-up positions; a call's
// abandonment is a discard right before the event that abandons it; a response closes its call
// with none; attempts count the reservations left unanswered in a row; only the reservation
// writer's chunks are served, in index order, never past a gap; and any page split resumes exactly.
import { describe, expect, it } from 'vitest';
import { START_POSITION, decodeCursor, encodeCursor, eventItems, factsOf, textItems, type StreamItem } from '../../../lib/api/stream-merge.js';
import type { StreamChunk } from '../../../lib/ports/run-stream.js';

const W = { epoch: 2, nonce: 'w' };
const ev = (seq: number, type: string, extra: Record<string, unknown> = {}) => ({ seq, type, by: W, ...extra });
const entries = (raws: Record<string, unknown>[]) => raws.map((raw) => ({ facts: factsOf(raw), view: raw }));
const chunk = (callSeq: number, index: number, text: string, writer = W): StreamChunk => ({ callSeq, index, text, at: 0, writer });
const brief = (items: StreamItem[]) =>
  items.map((i) => (i.type === 'event' ? `e${String(i.event.seq)}` : i.type === 'text' ? `t${i.callSeq}.${i.index}@${i.attempt}:${i.text}` : `d${i.callSeq}`));

// A turn answered, a tool turn whose result carries the next reservation, that attempt abandoned
// by a crash (a new model_started), the retry failed, another retry answered, the run completed.
const LOG = [
  ev(1, 'run_started'),
  ev(2, 'model_started', { step: 1 }),
  ev(3, 'model_response'),
  ev(4, 'tool_started'),
  ev(5, 'tool_result', { reservation: { step: 2 } }),
  ev(6, 'model_started', { step: 3 }),
  ev(7, 'model_failed'),
  ev(8, 'model_started', { step: 4 }),
  ev(9, 'model_response'),
  ev(10, 'run_completed'),
];

describe('stream merge', () => {
  it('cursors round-trip, and positions no server gives out are refused', () => {
    for (const p of [START_POSITION, { seq: 12, open: 12, unanswered: 1, index: 4 }, { seq: 40, open: 0, unanswered: 3, index: -1 }]) {
      expect(decodeCursor(encodeCursor(p))).toEqual(p);
    }
    for (const bad of ['', '12', 'a.b.c.d', '5.6.1.0', '5.0.0.3', '5.5.0.-1', '1.1.1.-2', '99999999999.0.0.-1', ' 1.0.0.-1']) {
      expect(decodeCursor(bad), bad).toBeUndefined();
    }
  });

  it('discards an abandoned attempt right before the event that abandons it; a response closes its call quietly', () => {
    const { items, position } = eventItems(START_POSITION, entries(LOG), 100);
    expect(brief(items)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5', 'd5', 'e6', 'd6', 'e7', 'e8', 'e9', 'e10']);
    expect(position).toEqual({ seq: 10, open: 0, unanswered: 0, index: -1 });
    // The attempt counts: the reservation at 5 is try 1 of its turn, 6 try 2, 8 try 3.
    const at = (seq: number) => decodeCursor(items.find((i) => i.type === 'event' && i.event.seq === seq)!.cursor)!;
    expect([at(2).unanswered, at(5).unanswered, at(6).unanswered, at(8).unanswered]).toEqual([1, 1, 2, 3]);
    // A run that ends with a call open drops its text too.
    const ended = eventItems(START_POSITION, entries([ev(1, 'run_started'), ev(2, 'model_started'), ev(3, 'run_cancelled')]), 100);
    expect(brief(ended.items)).toEqual(['e1', 'e2', 'd2', 'e3']);
  });

  it('serves the open call by its reservation writer only, in index order, stopping at a gap', () => {
    const open = { seq: 8, open: 8, unanswered: 3, index: -1 };
    const chunks = [chunk(6, 0, 'old'), chunk(8, 0, 'Hel'), chunk(8, 1, 'lo'), chunk(8, 2, 'evil', { epoch: 1, nonce: 'stale' }), chunk(8, 4, 'late')];
    const { items, position } = textItems(open, chunks, W, 100);
    expect(brief(items)).toEqual(['t8.0@3:Hel', 't8.1@3:lo']);
    expect(position).toEqual({ ...open, index: 1 });
    expect(textItems(open, chunks, undefined, 100).items).toEqual([]);
    expect(textItems({ ...open, open: 0, seq: 9, index: -1 }, chunks, W, 100).items).toEqual([]);
    expect(brief(textItems(open, chunks, W, 1).items)).toEqual(['t8.0@3:Hel']);
  });

  it('any split into pages, each resumed from the last cursor applied, gives exactly the whole list', () => {
    const whole = eventItems(START_POSITION, entries(LOG), 1000).items;
    for (let limit = 1; limit <= 4; limit++) {
      const got: StreamItem[] = [];
      let from = START_POSITION;
      for (let guard = 0; guard < 100; guard++) {
        const page = eventItems(from, entries(LOG.filter((e) => e.seq > from.seq)), limit);
        if (page.items.length === 0) break;
        got.push(...page.items);
        from = decodeCursor(page.items.at(-1)!.cursor)!;
      }
      expect(brief(got), `limit ${limit}`).toEqual(brief(whole));
    }
  });
});
