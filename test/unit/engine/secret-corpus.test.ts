/**
 * Issue 33: every secret of the corpus (test/fixtures/secret-corpus.ts) through every way a run
 * carries text: a run's input and the instructions built from it, a model's streamed text (read
 * live), its calls' arguments and a parse error quoting them, tool outputs and tool errors, an
 * approval's rejection comment and an edit's arguments, a signal's payload, a follow-up message, a
 * fork's new input, an attention's resolution, a cancel's reason, a model failure and the run's
 * failure, a child run's answer and its parent's. Then everything stored and served is read: the
 * log, heads, inbox items while they wait, stream chunks, blobs, GET /runs/{id}, its events, its
 * stream, its blobs, GET /runs and /run-counts, the inspector's page, outcome notices, spans with
 * payloads on, log lines, and what the model and the tools were given. No secret is in any of
 * them; the text around a secret (a connection string's host) and the look-alikes survive.
 */
import { describe, expect, it } from 'vitest';
import { NON_SECRETS, SECRET_CORPUS } from '../../fixtures/secret-corpus.js';
import { secretWorld, type SecretWorld } from './secret-world.js';

type Places = [string, string][];

async function readStream(w: SecretWorld, runId: string): Promise<string> {
  const pages: string[] = [];
  let after: string | undefined;
  for (let i = 0; i < 50; i++) {
    const page = await w.api('GET', `/runs/${runId}/stream?limit=200${after ? `&after=${after}` : ''}`);
    pages.push(page.text);
    const body = JSON.parse(page.text) as { items: unknown[]; next: string; done: boolean };
    if (body.items.length === 0 || body.done) break;
    after = body.next;
  }
  return pages.join('\n');
}

/** Everything stored for and served about one run. */
async function everything(w: SecretWorld, runId: string, places: Places): Promise<void> {
  const run = { tenant: 't', runId };
  const view = await w.api('GET', `/runs/${runId}`);
  expect(view.status, `GET /runs/${runId}`).toBe(200);
  places.push([`${runId}: GET /runs/{id}`, view.text]);
  const events = await w.api('GET', `/runs/${runId}/events?limit=500`);
  places.push([`${runId}: GET /runs/{id}/events`, events.text]);
  places.push([`${runId}: GET /runs/{id}/stream`, await readStream(w, runId)]);
  for (const sha of new Set([...events.text.matchAll(/"sha256":"([0-9a-f]{64})"/g)].map((m) => m[1]))) {
    const blob = await w.api('GET', `/runs/${runId}/blobs/${sha}`);
    if (blob.status === 200) places.push([`${runId}: GET /runs/{id}/blobs/${sha}`, blob.text]);
  }
  const page = await w.ui.request(`/runs/${runId}`);
  places.push([`${runId}: inspector page`, await page.text()]);
  places.push([`${runId}: stored events`, JSON.stringify((await w.storage.log.read(run, { afterSeq: 0 })).events)]);
  places.push([`${runId}: stored head`, JSON.stringify(await w.storage.heads.getHead(run))]);
  places.push([`${runId}: stored stream chunks`, JSON.stringify(await w.storage.stream.read(run, {}))]);
  for (const key of w.storage.blobStore.keys().filter((k) => k.includes(`/${runId}/`))) {
    places.push([`${runId}: stored blob ${key}`, new TextDecoder().decode(await w.storage.blobStore.get(key))]);
  }
}

/** Drive the four kinds of run for one secret text; returns the ids of the runs made. */
async function drive(w: SecretWorld, i: number, places: Places): Promise<string[]> {
  const S = w.state.secret;
  const inbox = async (runId: string, what: string) =>
    places.push([`${runId}: inbox item waiting (${what})`, JSON.stringify(await w.storage.store.list({ tenant: 't', runId }))]);
  const ok = (res: { status: number; text: string }, status: number, what: string) => expect(res.status, `${what}: ${res.text}`).toBe(status);
  let current = '';
  w.state.live = async () => void places.push([`${current}: GET /runs/{id}/stream while the model streams`, await readStream(w, current)]);

  // A: input, instructions, streamed text, calls, outputs, errors, approvals, a signal, a message, a fork.
  const a = (current = `a-${i}`);
  ok(await w.api('POST', '/runs', { agent: 'probe', runId: a, input: { note: S } }), 201, 'start');
  await w.drain();
  const waits = (JSON.parse((await w.api('GET', `/runs/${a}`)).text) as { waiting: { callId: string; tool: string }[] }).waiting;
  const callOf = (tool: string) => waits.find((x) => x.tool === tool)!.callId;
  ok(await w.api('POST', `/runs/${a}/approve`, { callId: callOf('charge'), decision: 'reject', comment: `no: ${S}` }), 202, 'reject');
  ok(await w.api('POST', `/runs/${a}/approve`, { callId: callOf('refund'), decision: 'edit', args: { note: S }, comment: S }), 202, 'edit');
  await inbox(a, 'approvals');
  await w.drain();
  ok(await w.api('POST', `/runs/${a}/signals`, { signal: 'code', payload: { code: S } }), 202, 'signal');
  await inbox(a, 'signal');
  await w.drain();
  ok(await w.api('POST', `/runs/${a}/messages`, { input: S }), 202, 'message');
  await inbox(a, 'message');
  await w.drain();
  expect(JSON.parse((await w.api('GET', `/runs/${a}`)).text).status, `run ${a}`).toBe('completed');
  const f = (current = `f-${i}`);
  ok(await w.api('POST', `/runs/${a}/fork`, { atSeq: 1, runId: f, input: { note: S } }), 201, 'fork');
  await w.drain();

  // B: an unknown outcome, its resolution, a cancel with a reason.
  const b = (current = `b-${i}`);
  ok(await w.api('POST', '/runs', { agent: 'desk', runId: b, input: { note: S } }), 201, 'start desk');
  await w.drain();
  await w.later(10_000);
  const attention = (JSON.parse((await w.api('GET', `/runs/${b}`)).text) as { attention: { callId: string }[] }).attention;
  ok(await w.api('POST', `/runs/${b}/resolve`, { callId: attention[0]!.callId, outcome: 'succeeded', result: { note: S } }), 202, 'resolve');
  await inbox(b, 'resolution');
  await w.drain();
  ok(await w.api('POST', `/runs/${b}/cancel`, { reason: `stop: ${S}` }), 202, 'cancel');
  await inbox(b, 'cancel');
  await w.drain();
  expect(JSON.parse((await w.api('GET', `/runs/${b}`)).text).status).toBe('cancelled');

  // C: a model failure quoting the prompt, and the run's failure.
  const c = (current = `c-${i}`);
  ok(await w.api('POST', '/runs', { agent: 'crash', runId: c, input: S }), 201, 'start crash');
  await w.drain();
  expect(JSON.parse((await w.api('GET', `/runs/${c}`)).text).status).toBe('failed');

  // D: a child run's answer reaches its parent through the parent's inbox.
  const d = (current = `d-${i}`);
  ok(await w.api('POST', '/runs', { agent: 'planner', runId: d, input: { task: S } }), 201, 'start planner');
  await w.drain();
  expect(JSON.parse((await w.api('GET', `/runs/${d}`)).text).status).toBe('completed');
  const child = (await w.storage.heads.listRuns('t', { limit: 1000 })).runs.find((h) => h.agent.name === 'researcher' && h.parent?.runId === d);
  return [a, f, b, c, d, ...(child ? [child.runId] : [])];
}

describe('issue 33: the secret corpus through every field a run has', () => {
  it(`${SECRET_CORPUS.length} secrets: none is stored, served, streamed, noticed, traced, logged or given to the model or a tool`, async () => {
    const w = secretWorld();
    let checks = 0;
    let placesTotal = 0;
    let redactedPlaces = 0;
    for (const [i, entry] of SECRET_CORPUS.entries()) {
      w.state.secret = entry.text;
      const mark = { spans: w.tracer.spans.length, notices: w.storage.publisher!.notices!.length, log: w.logLines.length, seen: w.seen.length };
      const places: Places = [];
      const runs = await drive(w, i, places);
      expect(runs, entry.name).toHaveLength(6);
      for (const runId of runs) await everything(w, runId, places);
      places.push(['GET /runs', (await w.api('GET', '/runs?limit=200')).text], ['GET /run-counts', (await w.api('GET', '/run-counts')).text]);
      places.push(['inspector shell', await (await w.ui.request('/')).text()]);
      places.push(['outcome notices', JSON.stringify(w.storage.publisher!.notices!.slice(mark.notices))]);
      places.push(['spans (payloads on)', JSON.stringify(w.tracer.spans.slice(mark.spans))]);
      places.push(['log lines', w.logLines.slice(mark.log).join('\n')]);
      places.push(['what the model and the tools were given', w.seen.slice(mark.seen).join('\n')]);
      for (const [where, text] of places) {
        for (const secret of entry.secrets) {
          checks++;
          expect(text.includes(secret), `${entry.kind} "${entry.name}": ${secret} in ${where}`).toBe(false);
        }
        if (text.includes('[REDACTED:')) redactedPlaces++;
      }
      placesTotal += places.length;
      // What stands beside a secret is kept (the events hold it, JSON-escaped).
      const events = places.find(([where]) => where === `a-${i}: GET /runs/{id}/events`)![1];
      for (const keep of entry.keep ?? []) expect(events, `${entry.name} keeps ${keep}`).toContain(JSON.stringify(keep).slice(1, -1));
    }
    // The secrets did reach these places, redacted: a test that looked at empty pages would prove nothing.
    expect(redactedPlaces).toBeGreaterThan(placesTotal * 0.6);
    expect(w.tracer.spans.some((s) => Object.keys(s.attributes).some((k) => k.startsWith('gen_ai.') && /messages|arguments|result/.test(k)))).toBe(true);
    console.log(`secret corpus: ${SECRET_CORPUS.length} entries, ${checks} (secret x place) checks over ${placesTotal} places`);
  }, 600_000);

  it('the look-alikes survive every field: Luhn-failing order numbers, timestamps, hashes, ids, ordinary base64', async () => {
    const w = secretWorld();
    w.state.secret = NON_SECRETS.join(' | ');
    const places: Places = [];
    const runs = await drive(w, 0, places);
    for (const runId of runs) await everything(w, runId, places);
    const events = places.find(([where]) => where === 'a-0: GET /runs/{id}/events')![1];
    for (const text of NON_SECRETS) expect(events, text).toContain(JSON.stringify(text).slice(1, -1));
    expect(events).not.toContain('[REDACTED:');
  });
});
