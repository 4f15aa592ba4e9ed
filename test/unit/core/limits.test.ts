import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ManualClock, MemoryStore } from '../../../lib/adapters/memory/index.js';
import { DEFAULT_ENGINE_CONFIG } from '../../../lib/engine/engine.js';
import { LeaseKeeper } from '../../../lib/engine/lease-keeper.js';
import {
  DEFAULT_TOOL_TIMEOUT_MS,
  LEASE_MS,
  LEASE_RENEWALS_PER_LEASE,
  MARGIN_MS,
  MAX_CLAIM_ATTEMPTS,
  MAX_CLAIM_ATTEMPTS_LIMIT,
  MAX_RECEIVE_COUNT,
  MAX_TOOL_TIMEOUT_MS,
  MODEL_TIMEOUT_MS,
  STEP_QUEUE_VISIBILITY_S,
  TOOL_ROOM_MS,
  VISIBILITY_MARGIN_S,
  WORKER_TIMEOUT_MS,
  WORKER_TIMEOUT_S,
  tickVisibilitySeconds,
  tickBackoffSeconds,
  worstCasePoisonSeconds,
  MAX_CRASHED_TOOL_ATTEMPTS,
  MAX_STALLED_CLAIMS,
  SQS_MAX_VISIBILITY_S,
  STEP_QUEUE_RETENTION_S,
} from '../../../lib/core/limits.js';
import { initialHead } from '../../../lib/engine/start-run.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { envSchema } from '../../../lib/lambda/env.js';

const ENV = { LOGBOOK_TABLE: 't', LOGBOOK_BUCKET: 'b', LOGBOOK_QUEUE_URL: 'http://127.0.0.1:1/q.fifo' };

describe('limits.ts: the relations between the shared numbers', () => {
  it('the step queue keeps a tick invisible at least 6 x the worker timeout (AWS event source rule)', () => {
    expect(STEP_QUEUE_VISIBILITY_S).toBeGreaterThanOrEqual(6 * WORKER_TIMEOUT_S);
    expect(WORKER_TIMEOUT_MS).toBe(WORKER_TIMEOUT_S * 1000);
  });

  it('a worker shortens its tick to lease + margin: longer than the lease, shorter than the queue visibility', () => {
    const seconds = tickVisibilitySeconds(LEASE_MS);
    expect(seconds).toBe(LEASE_MS / 1000 + VISIBILITY_MARGIN_S);
    expect(seconds * 1000).toBeGreaterThan(LEASE_MS);
    expect(seconds).toBeLessThanOrEqual(STEP_QUEUE_VISIBILITY_S);
  });

  it('the poison limit parks a run before its tick reaches the DLQ, and configuration cannot raise it past that', () => {
    expect(MAX_RECEIVE_COUNT).toBeGreaterThanOrEqual(5);
    expect(MAX_CLAIM_ATTEMPTS).toBeLessThan(MAX_RECEIVE_COUNT);
    expect(MAX_CLAIM_ATTEMPTS_LIMIT).toBeLessThan(MAX_RECEIVE_COUNT);
    expect(envSchema.parse({ ...ENV, LOGBOOK_MAX_ATTEMPTS: String(MAX_CLAIM_ATTEMPTS_LIMIT) }).LOGBOOK_MAX_ATTEMPTS).toBe(MAX_CLAIM_ATTEMPTS_LIMIT);
    expect(envSchema.safeParse({ ...ENV, LOGBOOK_MAX_ATTEMPTS: String(MAX_RECEIVE_COUNT) }).success).toBe(false);
  });

  it('back-off: every delivery after the first waits longer, and never less than the lease of the worker that died', () => {
    expect(tickBackoffSeconds(LEASE_MS, 1)).toBe(0);
    let previous = 0;
    for (let n = 1; n <= MAX_RECEIVE_COUNT; n++) {
      const seconds = tickVisibilitySeconds(LEASE_MS, VISIBILITY_MARGIN_S, n);
      // The tick comes back after the dead holder's lease: a delivery is never wasted on "busy".
      expect(seconds * 1000).toBeGreaterThan(LEASE_MS);
      expect(seconds).toBeGreaterThan(previous);
      expect(seconds).toBeLessThanOrEqual(SQS_MAX_VISIBILITY_S);
      previous = seconds;
    }
    // Past the DLQ's count the back-off stops growing (the tick is gone by then anyway).
    expect(tickVisibilitySeconds(LEASE_MS, VISIBILITY_MARGIN_S, MAX_RECEIVE_COUNT + 3)).toBe(tickVisibilitySeconds(LEASE_MS, VISIBILITY_MARGIN_S, MAX_RECEIVE_COUNT));
  });

  it('every poison limit, with the back-off between deliveries, parks before the DLQ and inside the retention', () => {
    // The delivery each poison limit parks on (claim-accounting.ts, decide.ts) is one SQS makes.
    expect(MAX_CLAIM_ATTEMPTS_LIMIT + 1).toBeLessThanOrEqual(MAX_RECEIVE_COUNT);
    expect(MAX_STALLED_CLAIMS + 2).toBeLessThanOrEqual(MAX_RECEIVE_COUNT);
    expect(MAX_CRASHED_TOOL_ATTEMPTS + 1).toBeLessThanOrEqual(MAX_RECEIVE_COUNT);
    // Crash-interrupted reads get more starts than failing keyed writes (3) before a person looks.
    expect(MAX_CRASHED_TOOL_ATTEMPTS).toBeGreaterThan(3);
    // All deliveries before the last, each with its back-off, end long before SQS drops the tick.
    const worst = worstCasePoisonSeconds(LEASE_MS);
    expect(worst).toBe((LEASE_MS / 1000) * (2 ** (MAX_RECEIVE_COUNT - 1) - 1) + (MAX_RECEIVE_COUNT - 1) * VISIBILITY_MARGIN_S);
    expect(worst).toBeLessThan(STEP_QUEUE_RETENTION_S);
    expect(worstCasePoisonSeconds(WORKER_TIMEOUT_MS)).toBeLessThan(STEP_QUEUE_RETENTION_S);
  });

  it('the longest tool is the worker timeout minus the room for the rest of a step', () => {
    expect(MAX_TOOL_TIMEOUT_MS).toBe(WORKER_TIMEOUT_MS - TOOL_ROOM_MS);
    expect(TOOL_ROOM_MS).toBeGreaterThan(MARGIN_MS);
    expect(DEFAULT_TOOL_TIMEOUT_MS).toBeLessThanOrEqual(MAX_TOOL_TIMEOUT_MS);
    const tool = (timeoutMs: number) => defineTool({ name: 't', version: '1', description: 'd', input: z.object({}), timeoutMs, execute: async () => null });
    expect(tool(MAX_TOOL_TIMEOUT_MS).timeoutMs).toBe(MAX_TOOL_TIMEOUT_MS);
    expect(() => tool(MAX_TOOL_TIMEOUT_MS + 1)).toThrow(String(MAX_TOOL_TIMEOUT_MS));
  });

  it('a model call fits in an invocation with the margin to spare', () => {
    expect(MODEL_TIMEOUT_MS + MARGIN_MS).toBeLessThan(WORKER_TIMEOUT_MS);
  });

  it('engine and environment defaults are the limits', () => {
    expect(DEFAULT_ENGINE_CONFIG).toMatchObject({ leaseMs: LEASE_MS, marginMs: MARGIN_MS, maxClaimAttempts: MAX_CLAIM_ATTEMPTS, modelTimeoutMs: MODEL_TIMEOUT_MS });
    expect(envSchema.parse(ENV)).toMatchObject({ LOGBOOK_LEASE_MS: LEASE_MS, LOGBOOK_MAX_ATTEMPTS: MAX_CLAIM_ATTEMPTS, LOGBOOK_VISIBILITY_MARGIN_S: VISIBILITY_MARGIN_S });
  });
});

describe('limits.ts: the numbers hold in the lease keeper', () => {
  async function keeper(clock: ManualClock) {
    const store = new MemoryStore();
    const run = { tenant: 't', runId: 'limits' };
    await store.createHead(initialHead({ ...run, agent: { name: 'a', version: '1' }, at: clock.now(), expiresAt: clock.now() + 86_400_000 }, clock.now()));
    const grant = await store.claimLease(run, { owner: 'w', now: clock.now(), ttlMs: LEASE_MS });
    return new LeaseKeeper({ heads: store, clock, run, owner: 'w', epoch: grant.epoch, ttlMs: LEASE_MS, marginMs: MARGIN_MS });
  }

  it('healthy renewals keep the lease fresh enough to start calls, for a whole invocation', async () => {
    expect(LEASE_MS / LEASE_RENEWALS_PER_LEASE).toBeLessThan(LEASE_MS - MARGIN_MS);
    const clock = new ManualClock();
    const lease = await keeper(clock);
    const deadline = clock.now() + WORKER_TIMEOUT_MS;
    lease.start();
    const step = Math.floor(LEASE_MS / LEASE_RENEWALS_PER_LEASE);
    // Just before each renewal is the stalest the lease gets while renewals succeed.
    for (let t = 0; t + step < WORKER_TIMEOUT_MS - MODEL_TIMEOUT_MS - MARGIN_MS; t += step) {
      await clock.advance(step - 1);
      expect(() => lease.assertFresh(DEFAULT_TOOL_TIMEOUT_MS, deadline)).not.toThrow();
      await clock.advance(1);
    }
    await lease.stop();
  });

  it('a fresh invocation that spent its room on the rest of the step can still start the longest tool, and no longer one', async () => {
    const clock = new ManualClock();
    const lease = await keeper(clock);
    const deadline = clock.now() + WORKER_TIMEOUT_MS;
    lease.start();
    await clock.advance(TOOL_ROOM_MS - MARGIN_MS);
    expect(() => lease.assertFresh(MAX_TOOL_TIMEOUT_MS, deadline)).not.toThrow();
    expect(() => lease.assertFresh(MAX_TOOL_TIMEOUT_MS + 1, deadline)).toThrow(/left for a call/);
    await lease.stop();
  });
});
