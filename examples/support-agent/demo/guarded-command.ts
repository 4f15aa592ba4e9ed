import { parseArgs } from 'node:util';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { LogbookClient, UsageError, describeEvent, startLocalStack, watchRun, type Output, type RunView } from 'logbook/local';
import { SUPPORT_AGENTS_MODULE, ledgerPath, supportEnv } from './stack-env.js';

const INPUT = 'Customer c_77 writes: my order arrived damaged. Please refund it.';
const PARCEL = { trackingId: 'TRK-4711', condition: 'damaged' };
const FOLLOW_UP = 'Thanks! When does the money arrive?';

/**
 * `npm run demo:guarded`: control over runs on the local stack, scripted end to end. A
 * support-guarded run waits (holding no Lambda) for the warehouse's parcel_returned signal, then
 * asks for approval of its refund; the script edits the refund to $10, answers with a follow-up
 * message, and forks the finished run from its last turn. Each step prints the CLI command that
 * does the same by hand. Exits 0 when every step did what it should.
 */
export async function guardedCommand(argv: string[], io: Output): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { port: { type: 'string' }, dynamo: { type: 'string', default: 'auto' } }, strict: true });
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be a port number');
  const dynamo = values.dynamo;
  if (dynamo !== 'auto' && dynamo !== 'dynalite' && dynamo !== 'dynamodb-local') throw new UsageError('--dynamo must be auto, dynalite or dynamodb-local');
  const workDir = resolve('.logbook', 'guarded');
  rmSync(ledgerPath(workDir), { force: true });
  io.out('Starting the local stack...');
  const stack = await startLocalStack({ agentsModule: SUPPORT_AGENTS_MODULE, workDir, env: supportEnv(workDir, 0), dynamo, port });
  try {
    const client = new LogbookClient(stack.apiUrl);
    const api = ` --api ${stack.apiUrl}`;
    const runId = `guarded-${new Date().toISOString().replace(/[-:T.Z]/g, '').slice(0, 14)}`;
    let printed = 0;
    const settle = (statuses: string[]) =>
      watchRun(client, runId, {
        until: new Set([...statuses, 'failed', 'cancelled', 'parked']),
        timeoutMs: 60_000,
        onEvent: (e) => {
          if (Number(e.seq) <= printed) return;
          printed = Number(e.seq);
          io.out(`  ${String(e.seq).padStart(3)} ${String(e.type).padEnd(18)} ${describeEvent(e)}`);
        },
      }).then((r) => r.view);
    const expect = (view: RunView, status: string) => {
      if (view.status !== status) throw new Error(`run ${runId} is ${view.status}, expected ${status}`);
      return view;
    };

    io.out(`\n1. Start a support-guarded run:  npx logbook runs start support-guarded --input '${INPUT}' --run-id ${runId}${api}`);
    await client.startRun({ agent: 'support-guarded', input: INPUT, runId });
    const waiting = expect(await settle(['waiting']), 'waiting');
    io.out(`   -> waiting for signal ${waiting.waiting?.[0]?.signal} until ${waiting.waiting?.[0]?.until}; no worker runs meanwhile.`);

    io.out(`\n2. The warehouse signals:  npx logbook runs signal ${runId} --signal parcel_returned --payload '${JSON.stringify(PARCEL)}'${api}`);
    await client.signal(runId, { signal: 'parcel_returned', payload: PARCEL });
    const asking = expect(await settle(['awaiting_approval']), 'awaiting_approval');
    const approval = asking.waiting?.find((w) => w.kind === 'approval');
    if (!approval) throw new Error('no approval requested');
    io.out(`   -> ${approval.tool} (${approval.callId}) awaits approval: ${JSON.stringify(approval.args)}`);

    const args = { ...(approval.args as Record<string, unknown>), amountCents: 1000 };
    io.out(`\n3. Approve it with an edit:  npx logbook runs approve ${runId} --call ${approval.callId} --decision edit --args '${JSON.stringify(args)}' --comment 'refund $10 of $12.99'${api}`);
    await client.approve(runId, { callId: approval.callId, decision: 'edit', args, comment: 'refund $10 of $12.99' });
    const done = expect(await settle(['completed']), 'completed');
    io.out(`   -> ${String(done.result)}`);

    io.out(`\n4. The customer writes back:  npx logbook runs message ${runId} --input '${FOLLOW_UP}'${api}`);
    const before = done.lastSeq;
    await client.message(runId, { input: FOLLOW_UP });
    let answered = done;
    while (answered.lastSeq === before || answered.status !== 'completed') answered = await settle(['completed']);
    io.out(`   -> ${String(answered.result)}`);

    const events = await client.allEvents(runId);
    const lastTurn = events.filter((e) => e.type === 'tool_result' && Number(e.seq) < before).at(-1)?.seq as number;
    io.out(`\n5. Fork the finished run from its last turn:  npx logbook runs fork ${runId} --at ${lastTurn} --run-id ${runId}-fork${api}`);
    const fork = await client.fork(runId, { atSeq: lastTurn, runId: `${runId}-fork` });
    const forked = await watchRun(client, fork.runId, { timeoutMs: 60_000 }).then((r) => r.view);
    io.out(`   -> ${fork.runId} ${forked.status}: ${String(forked.result)}`);
    return forked.status === 'completed' ? 0 : 1;
  } finally {
    await stack.stop();
  }
}
