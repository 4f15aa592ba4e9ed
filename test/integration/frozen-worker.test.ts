// A real worker process frozen with SIGSTOP inside a verify-policy call (send_email, with the
// idempotency-key create_ticket beside it) on the local stack, kept frozen past its lease until
// another worker process has taken the run over, verified "not landed" and sent the email itself,
// then resumed with SIGCONT. Two ways to be frozen: before the tool's lease check (it must notice
// on waking and send nothing) and with the request already in flight (the service must refuse its
// lower fencing token). Either way: 0 duplicate effects, the run completes with a contiguous log,
// and nothing the frozen worker tried to write after the takeover landed.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogbookClient } from '../../dev/cli/api-client.js';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { FileLedger, duplicateEffects, type SideEffect } from '../../examples/support-agent/ledger.js';
import { endpointsFor, uniquePrefix } from '../setup/emulator-context.js';
import { eventually } from './runtime-helpers.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');

interface LoggedEvent {
  seq: number;
  type: string;
  callId?: string;
  calls?: { callId: string; name: string }[];
  by: { epoch: number };
}

let stack: LocalStack;
let client: LogbookClient;
let workDir: string;
const stopped = new Set<number>();

async function events(runId: string): Promise<LoggedEvent[]> {
  return (await stack.runtime.engine.log.read({ tenant: 'local', runId }, { afterSeq: 0 })).events as LoggedEvent[];
}

/** Freeze the worker process once the run's send_email call has started (and is held, see the fixture). */
async function freezeInsideSendEmail(runId: string): Promise<{ pid: number; epoch: number; callId: string }> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const log = await events(runId);
    const callId = log.flatMap((e) => e.calls ?? []).find((c) => c.name === 'send_email')?.callId;
    const started = log.find((e) => e.type === 'tool_started' && e.callId === callId);
    const holder = stack.runner.busyProcesses().find((p) => p.body.includes(`"runId":"${runId}"`));
    if (started && callId && holder) {
      process.kill(holder.pid, 'SIGSTOP');
      stopped.add(holder.pid);
      return { pid: holder.pid, epoch: started.by.epoch, callId };
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${runId}: send_email never started`);
}

describe.skipIf(!endpoints)('a worker process frozen (SIGSTOP) inside a call past its lease, resumed after another worker acted', () => {
  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'logbook-frozen-'));
    stack = await startLocalStack({
      port: 0,
      endpoints,
      prefix: uniquePrefix('frozen'),
      workDir,
      // Two sandboxes get frozen; the third takes both runs over.
      concurrency: 3,
      sweepEveryMs: 1_000,
      agentsModule: 'test/integration/frozen-worker.fixture.ts',
      env: { SUPPORT_LEDGER_FILE: join(workDir, 'ledger.jsonl'), FROZEN_GO_DIR: workDir },
    });
    client = new LogbookClient(stack.apiUrl);
  });

  afterAll(async () => {
    for (const pid of stopped) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // already gone
      }
    }
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('sends every email, ticket and refund once; the frozen worker writes nothing after the takeover', async () => {
    const runs = [
      { runId: 'frozen-before-check', agent: 'support' },
      { runId: 'frozen-in-flight', agent: 'support' },
    ];
    for (const r of runs) await client.startRun({ ...r, input: 'Customer c_77 says the order arrived damaged.' });
    const frozen = await Promise.all(runs.map((r) => freezeInsideSendEmail(r.runId)));

    // Frozen past the lease: another process claims the run, waits out the call's deadline + grace,
    // verifies "not landed", sends the email itself, refunds and completes.
    for (const r of runs) {
      await eventually(`${r.runId} to complete while its first worker is frozen`, async () => {
        const view = await client.getRun(r.runId);
        return ['completed', 'failed', 'parked'].includes(view.status) ? view : undefined;
      });
    }
    // Let the held calls go on once their process runs again, and resume it.
    for (const [i, f] of frozen.entries()) {
      writeFileSync(join(workDir, `go-${runs[i]!.runId}`), '');
      process.kill(f.pid, 'SIGCONT');
      stopped.delete(f.pid);
    }
    // The resumed workers carry on where they froze, until their invocations end.
    await eventually('the resumed invocations to end', () => (stack.runner.busyProcesses().some((p) => frozen.some((f) => f.pid === p.pid)) ? undefined : true));

    const ledger = new FileLedger(join(workDir, 'ledger.jsonl')).all();
    for (const [i, r] of runs.entries()) {
      const f = frozen[i]!;
      const view = await client.getRun(r.runId);
      expect(view.status).toBe('completed');
      expect(String(view.result)).toContain('Refunded order');
      const log = await events(r.runId);
      expect(log.map((e) => e.seq)).toEqual(log.map((_, n) => n + 1));
      expect(log.filter((e) => e.type === 'run_started')).toHaveLength(1);
      // Nothing the frozen worker tried to append after the takeover landed.
      const takeover = log.find((e) => e.by.epoch > f.epoch)?.seq ?? Infinity;
      expect(log.filter((e) => e.by.epoch === f.epoch).every((e) => e.seq < takeover)).toBe(true);
      // The new holder verified the email "not landed" and sent it again, as the policy says.
      expect(log.filter((e) => e.type === 'tool_verified' && e.callId === f.callId)).toMatchObject([{ status: 'not_landed' }]);
      expect(log.filter((e) => e.type === 'tool_started' && e.callId === f.callId)).toHaveLength(2);

      const effects = ledger.filter((e) => e.runId === r.runId);
      expect(duplicateEffects(effects)).toEqual([]);
      for (const service of ['tickets', 'email', 'payments'] as const) {
        expect(effects.filter((e) => e.service === service && e.applied)).toHaveLength(1);
      }
      const fromFrozen = (service: SideEffect['service']) => effects.filter((e) => e.service === service && e.op !== 'fence' && e.token === f.epoch);
      if (r.runId.includes('before-check')) {
        // Frozen before its lease check: on waking the check failed and no request left.
        expect([...fromFrozen('email'), ...fromFrozen('tickets')]).toEqual([]);
      } else {
        // Its requests were in flight: the email service refused the token below the one the
        // new holder's verify raised; the ticket service deduplicated by key.
        expect(fromFrozen('email')).toMatchObject([{ applied: false, detail: { refused: 'stale_fencing_token' } }]);
        expect(fromFrozen('tickets')).toMatchObject([{ applied: false }]);
      }
    }
    // The in-flight worker's deduplicated ticket came back ok; recording it was refused by the log.
    const workerLog = readFileSync(stack.workerLog, 'utf8');
    expect(workerLog).toMatch(/append rejected: stopping[^\n]*frozen-in-flight|frozen-in-flight[^\n]*append rejected: stopping/);
  }, 180_000);
});
