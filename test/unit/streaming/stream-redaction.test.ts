// The stream redactor over issue 33's secret corpus: every secret, streamed inside prose and split
// across two deltas at every position (and in random pieces, released at random moments), never
// shows in what is released, while the text around it (a connection string's host, the look-alikes
// that are no secrets) comes through; what is released is final and, put together, is the whole
// text as redacted at once. Its work stays linear in the text's length.
import { describe, expect, it } from 'vitest';
import { Redactor } from '../../../lib/core/redaction.js';
import { StreamRedactor } from '../../../lib/core/redaction-stream.js';
import { STREAM_HOLD_CHARS } from '../../../lib/core/limits.js';
import { NON_SECRETS, SECRET_CORPUS } from '../../fixtures/secret-corpus.js';
import { Rng } from '../engine/redaction-gen.js';

const r = new Redactor();
const BEFORE = 'Here is what the tool returned for the order you asked about.\nThe relevant part is: ';
const AFTER = ' and that is all of it.\nLet me know if you need anything else from the warehouse team today.';

/** Stream `pieces`, releasing after the pieces `releaseAfter` says; then the end. Undefined if the redactor stopped. */
function stream(pieces: string[], releaseAfter: (i: number) => boolean, redactor = r): string | undefined {
  const s = new StreamRedactor(redactor, { holdChars: STREAM_HOLD_CHARS });
  let out = '';
  for (let i = 0; i < pieces.length; i++) {
    s.push(pieces[i]!);
    if (!releaseAfter(i)) continue;
    const fresh = s.take(false);
    if (fresh === undefined) return undefined;
    out += fresh;
  }
  const last = s.take(true);
  return last === undefined ? undefined : out + last;
}

function leaks(text: string, entry: { secrets: string[] }): string[] {
  return entry.secrets.filter((secret) => text.includes(secret));
}

describe('StreamRedactor over the secret corpus', () => {
  it(`${SECRET_CORPUS.length} secrets, each split across two deltas at every position: never released, the rest released whole`, () => {
    let checks = 0;
    const stopped: string[] = [];
    for (const entry of SECRET_CORPUS) {
      const text = BEFORE + entry.text + AFTER;
      const whole = r.preview(text);
      // Every position in the secret's text and a few around it (the prose is the same for all).
      for (let at = BEFORE.length - 4; at <= BEFORE.length + entry.text.length + 4; at++) {
        const out = stream([text.slice(0, at), text.slice(at)], () => true);
        checks++;
        if (out === undefined) {
          stopped.push(`${entry.name} @${at}`);
          continue;
        }
        expect(leaks(out, entry), `${entry.name}, split at ${at}: ${out}`).toEqual([]);
        for (const keep of entry.keep ?? []) expect(out, `${entry.name} keeps ${keep}`).toContain(keep);
        expect(out, `${entry.name}, split at ${at}`).toBe(whole);
      }
    }
    expect(stopped).toEqual([]);
    expect(checks).toBe(SECRET_CORPUS.reduce((n, e) => n + e.text.length + 9, 0));
  });

  it('in random pieces (1 to 12 characters), released at random moments, char by char at the worst: no secret, the same text', () => {
    const rng = new Rng(33);
    for (const entry of SECRET_CORPUS) {
      const text = BEFORE + entry.text + AFTER;
      for (let round = 0; round < 6; round++) {
        const pieces: string[] = [];
        for (let i = 0; i < text.length;) {
          const n = round === 0 ? 1 : 1 + rng.int(12);
          pieces.push(text.slice(i, i + n));
          i += n;
        }
        const out = stream(pieces, () => round === 0 || rng.int(3) === 0);
        expect(out, `${entry.name}, round ${round}`).toBe(r.preview(text));
        expect(leaks(out!, entry)).toEqual([]);
      }
    }
  });

  it('the look-alikes that are no secrets stream through unchanged', () => {
    const text = NON_SECRETS.join('\n');
    const pieces = text.match(/[\s\S]{1,5}/g)!;
    expect(stream(pieces, () => true)).toBe(text);
  });

  it('holds the tail: nothing of a secret still being written is released, however long it gets', () => {
    const s = new StreamRedactor(r, { holdChars: STREAM_HOLD_CHARS });
    s.push('The card on file is 4111 1111 ');
    expect(s.take(false)).toBe('');
    s.push('1111 11');
    const early = s.take(false)!;
    s.push('11, thanks. ' + 'More words follow here. '.repeat(8));
    const rest = s.take(false)! + s.take(true)!;
    expect(early + rest).not.toContain('1111 1111');
    expect(early + rest).toContain('[REDACTED:payment_card]');
    // A long token (a JWT as one word) is held whole until it ends.
    const t = new StreamRedactor(r, { holdChars: STREAM_HOLD_CHARS });
    t.push('token: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0');
    let released = '';
    for (let i = 0; i < 40; i++) {
      t.push('abcdefghij'.slice(0, 1 + (i % 10)));
      released += t.take(false)!;
    }
    expect(released).toBe('token: ');
  });

  it('a private key never leaves the window raw, however many lines it spans', () => {
    const body = Array.from({ length: 40 }, (_, i) => `MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt${String(i).padStart(4, '0')}`);
    const text = `Key below.\n-----BEGIN RSA PRIVATE KEY-----\n${body.join('\n')}\n-----END RSA PRIVATE KEY-----\nDone. ${'And then some more text. '.repeat(6)}`;
    const out = stream(text.match(/[\s\S]{1,7}/g)!, () => true)!;
    for (const line of body) expect(out).not.toContain(line.slice(0, 40));
    expect(out).toBe(r.preview(text));
  });

  it('a secret whose company comes later (an AWS secret key before its key id) is redacted at once', () => {
    const text = `secret part wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY then ${'filler words here. '.repeat(6)} and the id AKIAIOSFODNN7EXAMPLE.`;
    const out = stream(text.match(/[\s\S]{1,9}/g)!, () => true)!;
    expect(out).not.toContain('wJalrXUtnFEMI');
    expect(r.text(text)).not.toContain('wJalrXUtnFEMI');
  });

  it('work stays linear: the characters redacted per character streamed do not grow with the length', () => {
    class Counting extends Redactor {
      chars = 0;
      override preview(value: string): string {
        this.chars += value.length;
        return super.preview(value);
      }
    }
    const ratio = (kb: number, line: string) => {
      const counting = new Counting();
      const text = line.repeat(Math.ceil((kb * 1024) / line.length));
      let since = 0;
      const pieces = text.match(/[\s\S]{1,40}/g)!;
      const out = stream(pieces, () => (since += 40) % 2048 === 0, counting);
      expect(out).toBe(text);
      return counting.chars / text.length;
    };
    const prose = 'The order shipped on time and the customer asked about the refund.\n';
    const oneLine = 'the order shipped on time and the customer asked about the refund, ';
    const small = ratio(32, prose);
    const large = ratio(256, prose);
    const longLine = ratio(256, oneLine);
    expect(large).toBeLessThan(small * 1.5);
    expect(large).toBeLessThan(12);
    expect(longLine).toBeLessThan(40);
    console.log(
      `stream redactor: ${small.toFixed(1)} / ${large.toFixed(1)} characters redacted per character streamed (32 / 256 KB of prose), ${longLine.toFixed(1)} on one 256 KB line`,
    );
  });
});
