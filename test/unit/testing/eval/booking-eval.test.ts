/**
 * runEval over the booking example (examples/booking-agent/booking-evals.ts): recorded trips
 * replayed against an unchanged candidate score perfectly; a planted prompt change (the card line
 * reworded, which the scripted model reads as a real model would) is caught by the scorers; and
 * no candidate call is ever executed: the fake airline and payment services of every candidate
 * world record no effect at all, though the reworded candidate asks for charges it never had.
 */
import { describe, expect, it } from 'vitest';
import { startRun } from 'logbook/engine';
import { driveRun, exportRuns, runEval, spawnWorker } from 'logbook/testing';
import { candidateAgents, recordTrips, trip } from '../../../../examples/booking-agent/booking-evals.js';
import { approveCharges, bookingWorld, referenceOf, visaLetter } from '../../../../examples/booking-agent/booking-world.js';
import type { TravelServices } from '../../../../examples/booking-agent/travel-services.js';

const recorded = await recordTrips(6);

describe('runEval on the booking agent', () => {
  it('records varied trips with approved charges (the recording itself wrote holds, charges and tickets)', () => {
    const writes = recorded.world.services.effects().filter((e) => e.applied && !e.readOnly);
    expect(writes).toHaveLength(18);
    expect(recorded.runs.some((r) => r.events.some((e) => e.type === 'approval_decided'))).toBe(true);
  });

  it('an unchanged candidate scores 1 on every run, every call served from the log, nothing executed', async () => {
    const services: TravelServices[] = [];
    const report = await runEval({ runs: recorded.runs, candidate: () => candidateAgents({ onServices: (s) => services.push(s) }), minScore: 1 });
    expect(report.failures).toEqual([]);
    expect(report.passed).toBe(true);
    expect(report.score).toBe(1);
    expect(report.scorers.map((s) => [s.name, s.mean])).toEqual([
      ['same_output', 1],
      ['same_tool_calls', 1],
      ['output_schema_valid', 1],
      ['tokens', 1],
      ['cost', 1],
    ]);
    expect(report.counts).toMatchObject({ runs: 6, evaluated: 6, errors: 0, served: 24, notExecuted: 0, executed: 0 });
    expect(report.candidate).toEqual({ booking: '1.1.0' });
    expect(report.runs[0]?.candidate?.output).toEqual(report.runs[0]?.recorded?.output);
    expect(services).toHaveLength(6);
    expect(services.flatMap((s) => s.effects())).toEqual([]);
  });

  it('a reworded prompt is caught: the charge is asked with another card (not executed), the output differs, the gate fails', async () => {
    const services: TravelServices[] = [];
    const report = await runEval({
      runs: recorded.runs,
      candidate: () => candidateAgents({ reword: true, onServices: (s) => services.push(s) }),
      minScore: 0.9,
    });
    expect(report.passed).toBe(false);
    expect(report.failures[0]).toMatch(/^score 0\.\d+ is under 0\.9$/);
    const first = report.runs[0]!;
    expect(first.candidate?.promptVersion).toBe('booking-prompt-2');
    expect(first.scores.same_output).toMatchObject({ score: 0 });
    expect(first.scores.same_tool_calls?.score).toBe(0.5);
    expect(first.scores.same_tool_calls?.detail).toMatch(/^call 3: charge_card\(.*"card":"card_visa_4242".*\) → charge_card\(.*"card":"\?".*\)$/);
    expect(first.wouldCall.map((c) => c.tool)).toEqual(['charge_card', 'issue_tickets']);
    expect(report.counts).toMatchObject({ evaluated: 6, served: 12, notExecuted: 12, executed: 0 });
    expect(report.scorers.find((s) => s.name === 'same_output')?.mean).toBe(0);
    // It asked for charges and ticketings the log could not answer: none of them happened.
    expect(services.flatMap((s) => s.effects())).toEqual([]);
  });

  it('a trip with the visa letter attached: the letter travels in the export, the candidate is sent its bytes and names it alike', async () => {
    const upload = visaLetter();
    const world = bookingWorld({ upload });
    const worker = spawnWorker(world);
    const run = { tenant: 'acme', runId: 'trip-doc' };
    await startRun(worker.deps, { ...run, agent: 'booking', input: { ...trip(1), document: referenceOf(upload) } });
    expect((await driveRun(world, run, { worker: () => worker, outside: approveCharges() })).head.status).toBe('completed');
    const runs = await exportRuns(world.storage, [run]);
    expect(runs[0]?.attachments.map((a) => a.sha256)).toEqual([referenceOf(upload).sha256]);
    const report = await runEval({ runs, candidate: () => candidateAgents(), minScore: 1 });
    expect(report.failures).toEqual([]);
    expect(report.runs[0]?.candidate?.output).toMatchObject({ travelDocument: { name: 'visa-letter.pdf', sha256: referenceOf(upload).sha256 } });
    // Without the file, the candidate could not start: the input refers to an upload its world lacks.
    const bare = await runEval({ runs: [{ ...runs[0]!, attachments: [] }], candidate: () => candidateAgents() });
    expect(bare.runs[0]?.candidate).toMatchObject({ status: 'not_started', failure: { code: 'validation_error' } });
  });
});
