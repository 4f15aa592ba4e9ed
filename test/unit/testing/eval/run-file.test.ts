/**
 * The run file (`logbook runs export` / `runs import`): a round trip keeps what the log holds
 * (redacted values stay redacted, never the raw one), every payload reference and attachment
 * resolves in the storage it lands in, under another tenant too; a bad file names its line.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ScriptedModel, defineAgent, defineAgents, defineTool } from 'logbook';
import { startRun } from 'logbook/engine';
import {
  agentsWorld,
  driveRun,
  exportRuns,
  formatRunFile,
  importRuns,
  memoryStorage,
  parseRunFile,
  spawnWorker,
  uploadAttachment,
  RunFileError,
  type ExportedRun,
} from 'logbook/testing';
import { createApiApp } from '../../../../lib/api/app.js';
import { engineRunService } from '../../../../lib/api/engine-service.js';
import { attachmentKey } from '../../../../lib/engine/attachments.js';
import { createEngine } from '../../../../lib/engine/engine.js';
import { ManualClock, SequentialIds } from '../../../../lib/adapters/memory/manual-clock.js';
import { visaLetter } from '../../../../examples/booking-agent/booking-world.js';

const SECRET = 'hunter2-correct-horse';

async function recordedRun(): Promise<ExportedRun[]> {
  const vault = defineTool({
    name: 'vault',
    version: '1',
    description: 'Reads the account.',
    input: z.object({ account: z.string() }),
    policy: 'rerun',
    // A secret under a secret-named key, and a body large enough to be offloaded to the blob store.
    execute: async ({ account }) => ({ account, password: SECRET, history: 'entry '.repeat(4000) }),
  });
  const script = [
    { text: 'reading', calls: [{ name: 'vault', args: { account: 'acme' } }] },
    { text: `done; the password field is ${SECRET.length} characters` },
  ];
  const agent = defineAgent({
    name: 'clerk',
    version: '1',
    model: { id: 'scripted:clerk', maxOutputTokens: 100, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } },
    system: { version: 'p', text: 'Read.' },
    tools: [vault],
  });
  const world = agentsWorld(defineAgents({ agents: [agent], models: { 'scripted:clerk': () => new ScriptedModel(script) } }));
  const document = await uploadAttachment(world.storage, 'acme', visaLetter());
  const worker = spawnWorker(world);
  const run = { tenant: 'acme', runId: 'clerk-1' };
  await startRun(worker.deps, { ...run, agent: 'clerk', input: { task: 'read the account', token: SECRET, document } });
  expect((await driveRun(world, run, { worker: () => worker })).head.status).toBe('completed');
  return exportRuns(world.storage, [run]);
}

/** The API over storage: what the inspector and the CLI would read from the stack the runs were imported into. */
function apiOver(storage: ReturnType<typeof memoryStorage>, tenant: string) {
  const deps = createEngine({
    ...storage,
    models: { resolve: () => undefined },
    registry: defineAgents([
      defineAgent({ name: 'x', version: '1', model: { id: 'scripted:x', maxOutputTokens: 1 }, system: { version: 'p', text: 't' }, tools: [] }),
    ]).registry,
    clock: new ManualClock(),
    ids: new SequentialIds('api'),
  });
  return createApiApp({ service: engineRunService(deps), caller: () => ({ tenant, principal: 'test' }) });
}

describe('export and import of recorded runs', () => {
  it('exports what the log holds: the secret redacted in events and payloads, the large result as a blob, the attachment by its bytes', async () => {
    const [run] = await recordedRun();
    const text = formatRunFile([run!]);
    expect(text).not.toContain(SECRET);
    expect(text).toContain('[REDACTED:field]');
    expect(run!.blobs.length).toBeGreaterThan(0);
    expect(run!.blobs.some((b) => b.text.includes('"password":"[REDACTED:field]"'))).toBe(true);
    expect(run!.attachments.map((a) => [a.mediaType, Buffer.from(a.base64, 'base64').equals(Buffer.from(visaLetter().bytes))])).toEqual([
      ['application/pdf', true],
    ]);
    expect(text.endsWith('\n')).toBe(true);
    expect(text.trimEnd().split('\n')).toHaveLength(1);
  });

  it('round-trips: imported into fresh storage, every reference resolves (through the API too) and an export of it is the same file', async () => {
    const runs = await recordedRun();
    const parsed = parseRunFile(formatRunFile(runs));
    const storage = memoryStorage();
    expect(await importRuns(storage, parsed)).toEqual({ imported: ['clerk-1'], skipped: [] });
    expect(formatRunFile(await exportRuns(storage, [{ tenant: 'acme', runId: 'clerk-1' }]))).toBe(formatRunFile(runs));
    const head = await storage.heads.getHead({ tenant: 'acme', runId: 'clerk-1' });
    expect(head).toMatchObject({ status: 'completed', lastSeq: runs[0]!.events.length, agent: { name: 'clerk', version: '1' } });
    expect(head?.notifiedSeq).toBe(head?.lastSeq);
    const app = apiOver(storage, 'acme');
    for (const blob of runs[0]!.blobs) {
      const res = await app.request(`/runs/clerk-1/blobs/${blob.sha256}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(blob.text);
    }
    const file = runs[0]!.attachments[0]!;
    const bytes = await storage.blobs.get(attachmentKey('acme', file.sha256), { sha256: file.sha256 });
    expect(Buffer.from(bytes).toString('base64')).toBe(file.base64);
    const view = (await (await app.request('/runs/clerk-1')).json()) as { status: string };
    expect(view.status).toBe('completed');
  });

  it('imports under another tenant (the local stack): run_started and every payload key move with it, contents and hashes do not', async () => {
    const runs = await recordedRun();
    const storage = memoryStorage();
    await importRuns(storage, runs, { tenant: 'local' });
    const [moved] = await exportRuns(storage, [{ tenant: 'local', runId: 'clerk-1' }]);
    expect(moved!.tenant).toBe('local');
    expect(moved!.events[0]).toMatchObject({ type: 'run_started', tenant: 'local' });
    expect(moved!.blobs.map((b) => b.key.split('/').slice(0, 2).join('/'))).toEqual(moved!.blobs.map(() => 'blobs/local'));
    expect(moved!.blobs.map((b) => [b.sha256, b.text])).toEqual(runs[0]!.blobs.map((b) => [b.sha256, b.text]));
    const app = apiOver(storage, 'local');
    expect((await app.request(`/runs/clerk-1/blobs/${runs[0]!.blobs[0]!.sha256}`)).status).toBe(200);
    expect((await apiOver(storage, 'acme').request('/runs/clerk-1')).status).toBe(404);
  });

  it('skips a run id already there and a run that has not finished (it would be resumed where it lands)', async () => {
    const runs = await recordedRun();
    const storage = memoryStorage();
    await importRuns(storage, runs);
    const unfinished: ExportedRun = {
      ...runs[0]!,
      runId: 'clerk-2',
      events: runs[0]!.events.slice(0, 3).map((e, i) => (i === 0 ? { ...e, runId: 'clerk-2' } : e)),
    };
    expect(await importRuns(storage, [...runs, unfinished])).toEqual({
      imported: [],
      skipped: [
        { runId: 'clerk-1', reason: 'a run with this id exists here' },
        { runId: 'clerk-2', reason: 'not finished: importing it would resume it here' },
      ],
    });
  });

  it('refuses a bad file by line and path: not JSON, not the schema, another version, a payload that does not hash', async () => {
    const runs = await recordedRun();
    const good = formatRunFile(runs).trimEnd();
    expect(() => parseRunFile(`${good}\n{nope`, 'runs.jsonl')).toThrow(new RunFileError('runs.jsonl line 2: not JSON'));
    const line = JSON.parse(good) as Record<string, unknown>;
    expect(() => parseRunFile(JSON.stringify({ ...line, runId: 'has space' }))).toThrow(/run file line 1: runId: /);
    expect(() => parseRunFile(JSON.stringify({ ...line, v: 2 }))).toThrow(/a v2 file; this Logbook reads v1/);
    const tampered = { ...line, blobs: [{ ...runs[0]!.blobs[0]!, text: '"changed"' }] };
    expect(() => parseRunFile(JSON.stringify(tampered))).toThrow(/blobs.0 does not hash to its sha256/);
    expect(() => parseRunFile(JSON.stringify({ ...line, runId: 'other-run' }))).toThrow(/events.0 is run acme\/clerk-1, the line says acme\/other-run/);
    expect(parseRunFile(`\n${good}\n\n`)).toHaveLength(1);
  });
});
