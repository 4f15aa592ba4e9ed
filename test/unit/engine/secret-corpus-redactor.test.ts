// Issue 33's corpus through the redactor itself, in the company secrets keep in real text: at the
// end of a sentence, in brackets or quotes, after a colon, on a line of their own, inside JSON
// (as a value and as text), so a rule that needs a clean end (a word boundary, a look-ahead)
// still finds a secret followed by a full stop. The readable part beside each stays.
import { describe, expect, it } from 'vitest';
import { Redactor } from '../../../lib/core/redaction.js';
import { NON_SECRETS, SECRET_CORPUS } from '../../fixtures/secret-corpus.js';

const r = new Redactor();
const WRAPS: [string, string][] = [
  ['', ''],
  ['It was ', '.'],
  ['(', ')'],
  ['"', '",'],
  ["'", "';"],
  ['value: ', '\nnext line'],
  ['\n', '\n'],
  ['<td>', '</td>'],
];

describe('the secret corpus of issue 33, through the redactor', () => {
  it(`${SECRET_CORPUS.length} entries in ${WRAPS.length} surroundings, as text and as JSON: every secret goes, what stands beside it stays`, () => {
    let checks = 0;
    for (const entry of SECRET_CORPUS) {
      for (const [before, after] of WRAPS) {
        const text = `${before}${entry.text}${after}`;
        const forms = [r.text(text), JSON.stringify(r.json({ note: text, list: [text] })), r.text(JSON.stringify({ note: text }))];
        for (const out of forms) {
          for (const secret of entry.secrets) {
            checks++;
            expect(out.includes(secret), `${entry.kind} "${entry.name}" in ${JSON.stringify(before)}…${JSON.stringify(after)}: ${out}`).toBe(false);
          }
        }
        for (const keep of entry.keep ?? []) expect(forms[0], `${entry.name} keeps ${keep}`).toContain(keep);
        // Redacting the stored form again changes nothing (hashes of redacted arguments stay stable).
        expect(r.text(forms[0]!)).toBe(forms[0]);
      }
    }
    expect(SECRET_CORPUS.length).toBeGreaterThanOrEqual(40);
    expect(new Set(SECRET_CORPUS.map((e) => e.kind)).size).toBe(11);
    expect(checks).toBeGreaterThan(SECRET_CORPUS.length * WRAPS.length * 3);
  });

  it('the look-alikes stay as they are: Luhn-failing numbers, timestamps, hashes, ids, ordinary base64, words with a secret name in them', () => {
    for (const text of NON_SECRETS) {
      expect(r.text(text)).toBe(text);
      expect(r.json({ note: text })).toEqual({ note: text });
    }
  });

  it('card numbers: by issuer, length and Luhn; never an order id, an amount or a timestamp', () => {
    for (const card of [
      '4111 1111 1111 1111',
      '4111111111111111',
      '4111-1111-1111-1111',
      '5500005555555559',
      '378282246310005',
      '3782 822463 10005',
      '6011111111111117',
      '3530111333300000',
      '2223003122003222',
      '4012888888881881',
    ]) {
      expect(r.text(`pay with ${card}.`), card).toBe('pay with [REDACTED:payment_card].');
    }
    const kept = [
      '4111111111111112',
      '5500005555555550',
      '1730419200000',
      '7340012345678901',
      '12345678901234567890',
      '4111 1111 1111 1111 1111 1',
      'ord-4111111111111111',
      '2026-11-01',
    ];
    for (const text of kept) expect(r.text(text), text).toBe(text);
  });

  it('base64: a blob is redacted when what it decodes to holds a secret, binary and ordinary text stay', () => {
    const wrapped = Buffer.from('DB_PASSWORD=hunter2-b64').toString('base64');
    expect(r.text(`env ${wrapped}`)).toBe('env [REDACTED:base64_secret]');
    const plain = Buffer.from('just a note about the parcel').toString('base64');
    expect(r.text(plain)).toBe(plain);
    const binary = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 37) % 256)).toString('base64');
    expect(r.text(binary)).toBe(binary);
    // An application that turns the built-in rules off turns this one off too.
    expect(new Redactor({ defaults: false }).text(`env ${wrapped}`)).toBe(`env ${wrapped}`);
  });

  it('pass, passwd and pwd keys, whatever the case and separators; not bypass or compass', () => {
    const out = r.json({
      pass: 'a1',
      PASS: 'a2',
      db_pass: 'a3',
      DB_PASS: 'a4',
      passwd: 'a5',
      pwd: 'a6',
      userPwd: 'a7',
      bypass: 'kept',
      compass: 'kept',
      boardingPass: 'kept',
    });
    expect(out).toEqual({
      pass: '[REDACTED:field]',
      PASS: '[REDACTED:field]',
      db_pass: '[REDACTED:field]',
      DB_PASS: '[REDACTED:field]',
      passwd: '[REDACTED:field]',
      pwd: '[REDACTED:field]',
      userPwd: '[REDACTED:field]',
      bypass: 'kept',
      compass: 'kept',
      boardingPass: 'kept',
    });
    expect(r.text('pass=a1 bypass=kept pwd: a2')).toBe('pass=[REDACTED:secret_assignment] bypass=kept pwd: [REDACTED:secret_assignment]');
  });
});
