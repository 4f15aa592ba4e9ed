/**
 * The booking example (examples/booking-agent) under logbook/testing: its crash harness, with the
 * charge approved inside the harness, and what each part of the agent does to a run: the typed
 * input refuses a bad trip before anything is written, the instructions are built from the input
 * and the traveller's profile and pinned, the model settings reach every call, older tool results
 * leave the prompt, and the run ends with the booking confirmation as `output`.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ScriptedModel, ValidationError, defineAgents, type ModelClient, type ModelRequest } from 'logbook';
import { startRun } from 'logbook/engine';
import { agentsWorld, driveRun, formatHarnessReport, runCrashHarness, spawnWorker } from 'logbook/testing';
import { BOOKING_MODEL_ID, bookingAgent, bookingScript } from '../../../examples/booking-agent/booking-agent.js';
import { DEMO_TRIP, approveCharges, bookingScenario, documentScenario, referenceOf, visaLetter } from '../../../examples/booking-agent/booking-world.js';
import { MemoryStore } from '../../../examples/booking-agent/state-store.js';
import { TravelServices, emptyTravelState } from '../../../examples/booking-agent/travel-services.js';
import { travellerDirectory } from '../../../examples/booking-agent/travellers.js';
import { startRunHint } from '../../../dev/cli/example-input.js';

const CONFIRMATION = {
  status: 'booked',
  locator: 'PNR0001',
  traveller: 'Ada Lovelace',
  flight: { number: expect.stringMatching(/^LB\d{3}$/), from: 'LHR', to: 'OSL', departure: expect.stringMatching(/^2027-03-14T/) },
  passengers: 2,
  totalEur: expect.any(Number),
  chargeId: 'ch_000001',
  tickets: ['074-0000000001', '074-0000000002'],
};

/** A world whose model records every request it is sent (the scripted booking model behind it). */
function recordingWorld() {
  const services = new TravelServices(new MemoryStore(emptyTravelState()));
  const scripted = new ScriptedModel(bookingScript());
  const requests: ModelRequest[] = [];
  const model: ModelClient = { complete: (request, options) => (requests.push(structuredClone(request)), scripted.complete(request, options)) };
  const agents = defineAgents({ agents: [bookingAgent(services)], models: { [BOOKING_MODEL_ID]: () => model }, appContext: () => travellerDirectory() });
  return { world: agentsWorld(agents), services, scripted, requests };
}

describe('the booking example', () => {
  it('holds at every crash point, pair of points and frozen worker: one hold, one charge, one ticketing, the same confirmation', async () => {
    const report = await runCrashHarness(bookingScenario, { doubleCrashStride: 9 });
    console.info(formatHarnessReport(report).split('\n')[0]);
    expect(report.failed, formatHarnessReport(report)).toBe(0);
    expect(report.baseline.status).toBe('completed');
    expect(report.baseline.output).toEqual(CONFIRMATION);
    // The answer itself, not JSON-quoted text: the JSON the model wrote.
    expect(JSON.parse(report.baseline.answer)).toEqual(report.baseline.output);
    // The approval was crashed around too: the inbox points of the manager's decision.
    const labels = report.points.map((p) => p.at[0]?.label ?? '');
    expect(labels.some((l) => l.includes('approval_requested'))).toBe(true);
    expect(labels.some((l) => l.includes('approval_decided'))).toBe(true);
    expect(report.points.filter((p) => p.kind === 'pause').length).toBeGreaterThan(3);
    expect(report.points.length).toBeGreaterThan(report.baseline.checkpoints + 10);
  }, 300_000);

  it('with a visa letter attached: every crash point ends with the confirmation naming it, and every model call, resumed or not, was sent its bytes', async () => {
    const models: ScriptedModel[] = [];
    const report = await runCrashHarness(
      documentScenario((model) => models.push(model)),
      { doubleCrashStride: 17 },
    );
    console.info(formatHarnessReport(report).split('\n')[0]);
    expect(report.failed, formatHarnessReport(report)).toBe(0);
    const letter = referenceOf(visaLetter());
    // The sha256 in the answer is the script's hash of the bytes the model received, not the reference's claim.
    expect(report.baseline.output).toEqual({
      ...CONFIRMATION,
      travelDocument: { name: 'visa-letter.pdf', mediaType: 'application/pdf', sha256: letter.sha256 },
    });
    expect(JSON.parse(report.baseline.answer)).toEqual(report.baseline.output);

    // What each model call was sent, over the world of the baseline and of every point: the calls
    // after a crash come from a successor worker, which read the bytes back from the upload. A
    // world whose model answered more than the baseline's 5 calls repeated one a crash cut off.
    const sha = (data: string) => createHash('sha256').update(Buffer.from(data, 'base64')).digest('hex');
    const calls = models.flatMap((m) => m.attachments.map((files) => files.map((f) => `${f.name} ${f.mediaType} ${sha(f.data)}`).join(', ')));
    expect(models.length).toBeGreaterThan(report.points.length);
    expect(calls.length).toBeGreaterThan(5 * report.points.length);
    expect(models.filter((m) => m.calls > 5).length).toBeGreaterThan(10);
    expect(new Set(calls)).toEqual(new Set([`visa-letter.pdf application/pdf ${letter.sha256}`]));
  }, 300_000);

  it('books through the approval: the charge waits for the manager, each write lands once, the output is the confirmation', async () => {
    const { world, services, scripted, requests } = recordingWorld();
    const run = { tenant: 'acme', runId: 'trip-2' };
    const worker = spawnWorker(world);
    await startRun(worker.deps, { ...run, agent: 'booking', input: DEMO_TRIP });

    // The manager is asked while the run waits at the charge: nothing is charged before the approval.
    const approve = approveCharges('ops-lead');
    let asked: { status: string; charges: number } | undefined;
    const done = await driveRun(world, run, {
      worker: () => worker,
      outside: (head, deps) => {
        if (!asked && head.waits?.some((w) => w.kind === 'approval'))
          asked = { status: head.status, charges: services.effects().filter((e) => e.op === 'charge').length };
        return approve(head, deps);
      },
    });
    expect(asked).toEqual({ status: 'awaiting_approval', charges: 0 });
    expect(done.head.status).toBe('completed');
    const applied = services.effects().filter((e) => e.applied && !e.readOnly);
    expect(applied.map((e) => `${e.service}:${e.op}`)).toEqual(['airline:hold', 'payments:charge', 'airline:ticket']);
    const events = (await world.storage.log.read(run, { afterSeq: 0 })).events as { type: string }[];
    const completed = events.find((e) => e.type === 'run_completed') as { output?: unknown } | undefined;
    expect(completed?.output).toEqual({ kind: 'inline', value: CONFIRMATION });
    const decided = events.find((e) => e.type === 'approval_decided') as { decision?: string; by?: string } | undefined;
    expect(decided).toMatchObject({ decision: 'approve' });

    // Instructions: built from the input and the traveller's profile, pinned in run_started.
    const started = events[0] as unknown as { type: string; prompt: { text: { kind: string; value?: string }; resolved?: boolean } };
    expect(started.type).toBe('run_started');
    expect(started.prompt.resolved).toBe(true);
    const prompt = started.prompt.text.value ?? '';
    expect(prompt).toContain('You book flights for Ada Lovelace (traveller t_ada), 2 passenger(s), LHR to OSL on 2027-03-14.');
    expect(prompt).toContain('Card on file: card_visa_4242.');
    expect(requests.every((r) => r.system === prompt)).toBe(true);

    // Settings: pinned and sent on every call.
    expect(scripted.settings).toHaveLength(5);
    for (const s of scripted.settings) expect(s).toEqual({ temperature: 0, toolChoice: 'auto', parallelToolCalls: false });

    // Context policy: the last call keeps 3 turns verbatim; the first turn's search result is shortened.
    const toolContent = (r: ModelRequest, name: string) => {
      const m = r.messages.find((x) => x.role === 'tool' && x.name === name);
      return m?.role === 'tool' ? m.content : '';
    };
    const full = toolContent(requests[1]!, 'search_flights');
    const last = toolContent(requests[4]!, 'search_flights');
    expect(full.length).toBeGreaterThan(300);
    expect(last).toMatch(/… \[result shortened from \d+ characters\]$/);
    expect(toolContent(requests[4]!, 'hold_seats')).toBe(toolContent(requests[2]!, 'hold_seats'));
  });

  it('refuses a trip that does not fit the input schema, and an unknown traveller, before anything is written', async () => {
    const { world, requests } = recordingWorld();
    const worker = spawnWorker(world);
    const bad = startRun(worker.deps, {
      tenant: 'acme',
      runId: 'trip-bad',
      agent: 'booking',
      input: { travellerId: 't_ada', from: 'LHR', to: 'LHR', date: 'soon', passengers: 0 },
    });
    await expect(bad).rejects.toBeInstanceOf(ValidationError);
    const issues = ((await bad.catch((e: unknown) => e)) as ValidationError).issues.map((i) => i.path);
    expect(issues).toEqual(expect.arrayContaining(['input.date', 'input.passengers']));
    const unknown = startRun(worker.deps, { tenant: 'acme', runId: 'trip-who', agent: 'booking', input: { ...DEMO_TRIP, travellerId: 't_nobody' } });
    await expect(unknown).rejects.toMatchObject({ code: 'instructions_failed', message: expect.stringContaining('no traveller t_nobody') });
    // A travel document never uploaded (this world has no uploads), and one of a type the field does not accept.
    const letter = referenceOf(visaLetter());
    const missing = await startRun(worker.deps, { tenant: 'acme', runId: 'trip-nodoc', agent: 'booking', input: { ...DEMO_TRIP, document: letter } }).catch(
      (e: unknown) => e,
    );
    expect(missing).toBeInstanceOf(ValidationError);
    expect((missing as ValidationError).issues.map((i) => i.path)).toEqual(['input.document']);
    const notes = { ...letter, mediaType: 'text/plain' };
    const wrongType = await startRun(worker.deps, { tenant: 'acme', runId: 'trip-txt', agent: 'booking', input: { ...DEMO_TRIP, document: notes } }).catch(
      (e: unknown) => e,
    );
    expect((wrongType as ValidationError).issues.map((i) => i.path)).toEqual(['input.document.mediaType']);
    // The `logbook dev` banner's example is the schema's own, and fits it.
    const agent = bookingAgent(new TravelServices(new MemoryStore(emptyTravelState())));
    expect(startRunHint(agent, '')).toBe(`npx logbook runs start booking --input '${JSON.stringify(DEMO_TRIP)}'`);
    for (const runId of ['trip-bad', 'trip-who', 'trip-nodoc', 'trip-txt'])
      expect((await world.storage.log.read({ tenant: 'acme', runId }, { afterSeq: 0 })).events).toEqual([]);
    expect(requests).toEqual([]);
  });
});
