/**
 * `npm run demo:booking` on the suite's emulators: the booking example on the local stack, over
 * HTTP, with its worker processes. A misfit trip is a 400 naming the fields; the visa letter is
 * uploaded and the trip refers to it; the charge waits for the approval; a worker is SIGKILLed after
 * it; the run completes with the confirmation as output (naming the letter by the hash of the bytes
 * the model got), and the services, whose state is in a file the worker processes share, applied
 * each write once.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VISA_LETTER_FILE } from '../../examples/booking-agent/booking-world.js';
import { bookingDemo } from '../../examples/booking-agent/demo.js';
import { endpointsFor } from '../setup/emulator-context.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');
const workDir = mkdtempSync(join(tmpdir(), 'logbook-booking-demo-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe.skipIf(!endpoints)('npm run demo:booking', () => {
  it(
    'refuses the misfit trip, books with the uploaded visa letter through the approval and a killed worker, each write once',
    { timeout: 300_000 },
    async () => {
      const lines: string[] = [];
      const report = await bookingDemo({ endpoints, workDir, prefix: `booking-demo-${process.pid}`, log: (l) => lines.push(l) });
      expect(report.refused.sort(), lines.join('\n')).toEqual(['body.input.date', 'body.input.to']);
      expect(report.approval).toEqual({ tool: 'charge_card', args: { locator: 'PNR0001', amountEur: expect.any(Number), card: 'card_visa_4242' } });
      expect(report.status, lines.join('\n')).toBe('completed');
      expect(report.output).toMatchObject({
        status: 'booked',
        locator: 'PNR0001',
        traveller: 'Ada Lovelace',
        chargeId: 'ch_000001',
        tickets: ['074-0000000001', '074-0000000002'],
      });
      // The upload answered the file's own hash, and the model was sent those bytes (the script hashes what it got).
      const sha256 = createHash('sha256').update(readFileSync(VISA_LETTER_FILE)).digest('hex');
      expect(report.document).toEqual({ kind: 'blob', sha256, mediaType: 'application/pdf', bytes: expect.any(Number), name: 'visa-letter.pdf' });
      expect(report.output).toMatchObject({ travelDocument: { name: 'visa-letter.pdf', mediaType: 'application/pdf', sha256 } });
      expect(report.applied).toEqual(['airline:hold', 'payments:charge', 'airline:ticket']);
      expect(report.ok).toBe(true);
    },
  );
});
