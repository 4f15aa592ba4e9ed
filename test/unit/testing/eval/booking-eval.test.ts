/**
 * runEval over the booking example: recorded trips replayed against an unchanged candidate score
 * perfectly, a planted prompt change is caught, and no candidate call is ever executed: the fake
 * services of every candidate world record no effect at all.
 */
import { describe, expect, it } from 'vitest';
import { runEval } from 'logbook/testing';
import { candidateAgents, recordTrips } from '../../../../examples/booking-agent/booking-evals.js';
import type { TravelServices } from '../../../../examples/booking-agent/travel-services.js';

const recorded = await recordTrips(6);

describe('runEval on the booking agent', () => {
  it('an unchanged candidate scores 1 on every run, every call served from the log, nothing executed', async () => {
    const services: TravelServices[] = [];
    const report = await runEval({ runs: recorded.runs, candidate: () => candidateAgents({ onServices: (s) => services.push(s) }), minScore: 1 });
    console.info(JSON.stringify(report.runs[0], null, 1).slice(0, 3000));
    expect(report.failures).toEqual([]);
    expect(report.passed).toBe(true);
    expect(report.counts).toMatchObject({ runs: 6, evaluated: 6, errors: 0, notExecuted: 0, executed: 0 });
    expect(report.score).toBe(1);
    expect(services.flatMap((s) => s.effects())).toEqual([]);
  });

  it('a reworded prompt is caught: different calls, would-call charges, a different output', async () => {
    const services: TravelServices[] = [];
    const report = await runEval({ runs: recorded.runs, candidate: () => candidateAgents({ reword: true, onServices: (s) => services.push(s) }), minScore: 0.9 });
    console.info(JSON.stringify(report.runs[0], null, 1).slice(0, 4000));
    expect(report.passed).toBe(false);
    expect(services.flatMap((s) => s.effects())).toEqual([]);
  });
});
