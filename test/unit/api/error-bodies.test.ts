// A run's storage key (`RUN#<tenant>#<runId>`) belongs to the DynamoDB adapter: errors carry the
// RunRef, and no key of the table ever reaches an error body a client reads.
import { Hono } from 'hono';
import { beforeEach, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { errorResponse } from '../../../lib/api/errors.js';
import type { Caller } from '../../../lib/api/tenant.js';
import { pk } from '../../../lib/adapters/aws/dynamo-keys.js';
import {
  AppendConflictError,
  LeaseHeldError,
  LeaseLostError,
  RunConflictError,
  RunNotFoundError,
  StaleLeaseError,
  StreamChunkConflictError,
} from '../../../lib/core/errors.js';
import { idempotencyKey, runName } from '../../../lib/core/run-ref.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { drain } from '../control/helpers.js';

const TENANT = 'acme-corp';
/** Any key of the single table: `RUN#`, `TENANT#`, `EVT#`, `INBOX#`, `PARENT#`, ... */
const STORAGE_KEY = /\b[A-Z]{3,}#/;

let t: ReturnType<typeof scriptedWorld>;

async function call(method: string, path: string, body?: unknown) {
  const app = createApiApp({ service: engineRunService(t.worker.deps), caller: (): Caller => ({ tenant: TENANT, principal: 'alice@example.com' }) });
  const res = await app.request(path, {
    method,
    ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, text: await res.text() };
}

beforeEach(() => {
  t = scriptedWorld({ tools: [], script: [{ text: 'done' }, { text: 'done again' }] });
});

describe('a missing run through the Hono app', () => {
  const routes: [string, string, unknown?][] = [
    ['GET', '/runs/ghost'],
    ['GET', '/runs/ghost/events'],
    ['POST', '/runs/ghost/cancel', {}],
    ['POST', '/runs/ghost/resolve', { action: 'retry' }],
    ['POST', '/runs/ghost/approve', { callId: '3-0', decision: 'approve' }],
    ['POST', '/runs/ghost/signals', { signal: 'parcel_returned', payload: {} }],
    ['POST', '/runs/ghost/messages', { input: 'hello' }],
    ['POST', '/runs/ghost/fork', { atSeq: 1 }],
  ];
  it.each(routes)('%s %s is a 404 naming the run by its id, with no storage key or tenant', async (method, path, body) => {
    const res = await call(method, path, body);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toEqual({ error: { code: 'run_not_found', message: 'run ghost not found' } });
    expect(res.text).not.toMatch(STORAGE_KEY);
    expect(res.text).not.toContain(TENANT);
  });
});

describe('a taken run id through the Hono app', () => {
  it('answers 409 naming the run by its id, for a new run and for a fork onto it', async () => {
    expect((await call('POST', '/runs', { agent: 'agent', input: 'a', runId: 'r-1' })).status).toBe(201);
    await drain(t.world, t.worker);
    const again = await call('POST', '/runs', { agent: 'agent', input: 'b', runId: 'r-1' });
    expect(again.status).toBe(409);
    expect(JSON.parse(again.text).error).toEqual({ code: 'run_conflict', message: 'run r-1 already exists with a different request' });
    expect((await call('POST', '/runs/r-1/fork', { atSeq: 1, runId: 'r-1-b' })).status).toBe(201);
    const fork = await call('POST', '/runs/r-1/fork', { atSeq: 1, runId: 'r-1-b', input: 'another question' });
    expect(fork.status).toBe(409);
    expect(JSON.parse(fork.text).error).toEqual({ code: 'run_conflict', message: 'run r-1-b already exists with a different request' });
    for (const text of [again.text, fork.text]) {
      expect(text).not.toMatch(STORAGE_KEY);
      expect(text).not.toContain(TENANT);
    }
  });
});

describe('every error about a run', () => {
  const run = { tenant: TENANT, runId: 'r-9' };
  const errors = [
    new RunNotFoundError(run),
    new RunConflictError(run),
    new AppendConflictError(run, 5),
    new LeaseHeldError(run, Date.UTC(2026, 0, 1)),
    new LeaseLostError(run, 3),
    new StaleLeaseError(run, 'the lease is past its margin'),
    new StreamChunkConflictError(run, 4, 0),
  ];

  it.each(errors.map((e) => [e.name, e] as const))('%s carries the RunRef and puts no storage key in its message or its API body', async (_name, error) => {
    expect(error.run).toEqual(run);
    expect(error.message).not.toContain(pk(run));
    expect(error.message).not.toMatch(STORAGE_KEY);
    const app = new Hono().get('/x', () => {
      throw error;
    });
    app.onError((e, c) => errorResponse(c, e));
    const text = await (await app.request('/x')).text();
    expect(text).not.toMatch(STORAGE_KEY);
  });

  it('names a run by runName and a tool call by idempotencyKey, in one format each', () => {
    expect(runName(run)).toBe('acme-corp/r-9');
    expect(idempotencyKey(run, '3-0')).toBe('acme-corp:r-9:3-0');
    expect(new LeaseLostError(run, 3).message).toBe('lease epoch 3 on acme-corp/r-9 is no longer ours');
    expect(pk(run)).toBe('RUN#acme-corp#r-9');
  });
});
