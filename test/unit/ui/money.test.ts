// Dollars on the API, in the CLI and in the inspector: one rounding (micro-dollars) and one way of
// writing them. The log keeps each call's exact cost; what is shown never carries float noise.
import { describe, expect, it } from 'vitest';
import { runSummary, runView } from '../../../lib/api/run-views.js';
import { formatUsd, roundUsd, USD_DECIMALS } from '../../../lib/core/money.js';
import type { RunHead } from '../../../lib/ports/run-heads.js';
import { formatUsd as cliFormatUsd } from '../../../dev/cli/table.js';
import { USD_DECIMALS as INSPECTOR_DECIMALS, usd as inspectorUsd } from '../../../dev/ui/client/format.js';

/** What the head sums to after a call of $0.009435 and one of $0.000006: 0.009441000000000001. */
const noisy = 0.009435 + 0.000006;

const head = {
  tenant: 't',
  runId: 'r-1',
  agent: { name: 'ops', version: '1' },
  status: 'completed',
  lastSeq: 9,
  createdAt: 0,
  updatedAt: 1,
  epoch: 1,
  attempts: 0,
  inboxVersion: 0,
  ingestedInboxVersion: 0,
  usage: { steps: 3, inputTokens: 300, outputTokens: 90, costUsd: noisy },
  attention: [],
  notifiedSeq: 9,
} as unknown as RunHead;

/** Places after the decimal point in a number's JSON. */
const decimals = (n: number) => (JSON.stringify(n).split('.')[1] ?? '').length;

describe('money', () => {
  it('the head sums with float noise; the API views show it rounded to micro-dollars', () => {
    expect(JSON.stringify(noisy)).toBe('0.009441000000000001');
    expect(runSummary(head).usage.costUsd).toBe(0.009441);
    expect(JSON.stringify(runView(head, undefined, undefined).usage)).toBe('{"steps":3,"inputTokens":300,"outputTokens":90,"costUsd":0.009441}');
    expect(head.usage.costUsd).toBe(noisy); // the head (and the log) keep the exact sum
  });

  it('rounds any sum to at most USD_DECIMALS places, nearest', () => {
    let sum = 0;
    for (let i = 1; i <= 2_000; i++) {
      sum += (i % 7) * 0.0000031 + 0.00000017;
      const rounded = roundUsd(sum);
      expect(decimals(rounded), String(sum)).toBeLessThanOrEqual(USD_DECIMALS);
      expect(Math.abs(rounded - sum)).toBeLessThanOrEqual(0.5 * 10 ** -USD_DECIMALS + 1e-12);
    }
    expect(roundUsd(12.3456785)).toBe(12.345679);
    expect(roundUsd(0)).toBe(0);
  });

  it('the CLI and the inspector write dollars the same way', () => {
    expect(cliFormatUsd).toBe(formatUsd);
    expect(INSPECTOR_DECIMALS).toBe(USD_DECIMALS);
    for (const value of [0, noisy, 0.00004999, 0.99995, 0.999999, 1, 1.005, 12.3456785, 1234.5, 0.1 + 0.2]) {
      expect(inspectorUsd(value), String(value)).toBe(formatUsd(value));
    }
    expect(formatUsd(noisy)).toBe('$0.0094');
    expect(formatUsd(12.3456785)).toBe('$12.35');
  });
});
