/**
 * `npm run demo:workflow` on the suite's emulators: refund-review workflow runs on the local stack
 * with its worker processes, with and without --chaos (busy workers SIGKILLed). Every run
 * completes, the large refunds waited for the manager's signal, and each write (refund,
 * confirmation, follow-up) was applied once per run: the refund's key deduplicated by the payment
 * service, the emails kept to one by verify() looking in the mailbox.
 */
import { describe, expect, it } from 'vitest';
import { summary, workflowDemo } from '../../examples/refund-review/demo.js';
import { endpointsFor } from '../setup/emulator-context.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');

describe.skipIf(!endpoints)('npm run demo:workflow', () => {
  for (const chaos of [false, true]) {
    it(
      `${chaos ? '--chaos: ' : ''}every run completes, the large ones after the manager's signal, with no duplicate side effect`,
      { timeout: 400_000 },
      async () => {
        const lines: string[] = [];
        const report = await workflowDemo({ runs: 4, chaos, seed: chaos ? 7 : 1, endpoints, log: (l) => lines.push(l) });
        const json = JSON.parse(JSON.stringify(summary(report))) as Record<string, unknown>;
        expect(Object.keys(json)).toEqual(expect.arrayContaining(['runs', 'completed', 'parked', 'workerKills', 'sideEffects', 'duplicateSideEffects', 'ok']));
        expect(json.ok, `${lines.join('\n')}\n${JSON.stringify(report.checks, null, 2)}`).toBe(true);
        expect(json.duplicateSideEffects).toBe(0);
        expect(json.completed).toBe(json.runs);
        expect(report.signalled).toBe(2);
        // A refund, a confirmation and a follow-up per run.
        expect(json.sideEffects).toBe(12);
        expect(report.outputs['refund-' + (chaos ? 7 : 1) + '-2']).toMatchObject({
          status: 'refunded',
          refundedCents: 132_400,
          approvedBy: expect.any(String),
          verdict: { decision: 'refund' },
        });
        if (chaos) expect(report.workerKills).toBeGreaterThan(0);
      },
    );
  }
});
