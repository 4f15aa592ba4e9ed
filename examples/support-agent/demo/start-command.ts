import { parseArgs } from 'node:util';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { LogbookClient, UsageError, describeEvent, javaAvailable, progressLine, startLocalStack, telemetryLines, watchRun, type Output } from 'logbook/local';
import { LOCAL_SCRIPTED_PACE_MS, SCRIPTED_PACE_ENV } from 'logbook';
import { SUPPORT_AGENTS_MODULE, ledgerPath, supportEnv } from './stack-env.js';

export const DEMO_INPUT = 'Customer c_77 writes: my order arrived damaged. Please refund it and let me know.';

/**
 * `npm start`: the local stack, one demo run followed live, its answer, then the API keeps
 * serving until Ctrl-C (or exit at once with --once, for scripts and CI).
 */
export async function startCommand(argv: string[], io: Output): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      once: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      dynamo: { type: 'string', default: 'auto' },
      'tool-delay': { type: 'string', default: '400' },
    },
    strict: true,
  });
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new UsageError('--port must be a port number');
  const dynamo = values.dynamo;
  if (dynamo !== 'auto' && dynamo !== 'dynalite' && dynamo !== 'dynamodb-local') throw new UsageError('--dynamo must be auto, dynalite or dynamodb-local');
  const started = Date.now();
  const say = (text: string) => (values.json ? io.err(text) : io.out(text));

  say('Starting the local stack (DynamoDB, S3 and SQS emulators, API, worker runner)...');
  if (dynamo === 'auto' && !javaAvailable()) {
    say('notice: java not found, so DynamoDB runs on dynalite (in-process); install a Java 17 runtime to use DynamoDB Local.');
  }
  const workDir = resolve('.logbook');
  // A fresh stack is a fresh world: the fake services forget what the last one did.
  rmSync(ledgerPath(workDir), { force: true });
  const stack = await startLocalStack({
    agentsModule: SUPPORT_AGENTS_MODULE,
    workDir,
    // The scripted model's answer is streamed at a pace people can see (`runs watch`, the inspector).
    env: { ...supportEnv(workDir, Number(values['tool-delay'])), [SCRIPTED_PACE_ENV]: process.env[SCRIPTED_PACE_ENV] ?? String(LOCAL_SCRIPTED_PACE_MS) },
    dynamo,
    ...(port !== undefined ? { port } : {}),
  }).catch((error: unknown) => {
    if ((error as { code?: string }).code === 'EADDRINUSE') {
      throw new UsageError(`port ${port ?? process.env.LOGBOOK_PORT ?? 8787} is in use: stop the other \`npm start\`, or pick another with --port N or LOGBOOK_PORT`);
    }
    throw error;
  });
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= stack.stop());
  try {
    say(`DynamoDB: ${stack.dynamo}   table ${stack.resources.tableName}, bucket ${stack.resources.bucket}, queue ${stack.resources.names.queue}`);
    say(`API:      ${stack.apiUrl}   (OpenAPI at ${stack.apiUrl}/openapi.json)`);
    say(`Worker:   ${stack.runner.stats.starts} local Lambda sandbox(es); logs in ${stack.workerLog}`);
    say(`Inspector: ${stack.uiUrl}`);
    // Spans and metrics as the standard OTEL_* variables say (OTEL_EXPORTER_OTLP_ENDPOINT=... npm start).
    for (const line of telemetryLines(stack.telemetry)) say(line);
    const client = new LogbookClient(stack.apiUrl);
    const runId = `demo-${new Date().toISOString().replace(/[-:T.Z]/g, '').slice(0, 14)}`;
    await client.startRun({ agent: 'support', input: DEMO_INPUT, runId });
    say(`\nDemo run ${runId} (support agent, scripted model):`);
    let lastLine = '';
    const { view, progress } = await watchRun(client, runId, {
      timeoutMs: 240_000,
      onEvent: (event, p, names) => {
        if (io.tty && !values.json) {
          lastLine = progressLine(p, names);
          process.stderr.write(`\r\x1b[2K${lastLine}`);
        } else {
          say(`  ${String(event.seq).padStart(3)} ${String(event.type).padEnd(18)} ${describeEvent(event)}`);
        }
      },
    });
    if (io.tty && !values.json) process.stderr.write('\n');
    say(`\nStatus: ${view.status} after ${progress.turns} turns, ${progress.toolsDone} tool calls, ` +
      `${view.usage.inputTokens} input + ${view.usage.outputTokens} output tokens ($${view.usage.costUsd.toFixed(4)})`);
    const answer = typeof view.result === 'string' ? view.result : view.result === undefined ? undefined : JSON.stringify(view.result);
    if (answer) say(`Answer: ${answer}`);
    if (view.failure) say(`Failure: ${view.failure.code}: ${view.failure.message}`);
    for (const a of view.attention) say(`Needs attention: ${a.reason}${a.callId ? ` on ${a.callId}` : ''}: ${a.detail}`);
    if (values.json) {
      io.out(JSON.stringify({ runId, status: view.status, answer: answer ?? null, turns: progress.turns, usage: view.usage, elapsedMs: Date.now() - started }));
    }
    if (values.once) return view.status === 'completed' ? 0 : 1;

    say(`\nThe API keeps serving at ${stack.apiUrl}. In another terminal try:`);
    say('  npx logbook runs list');
    say(`  npx logbook runs show ${runId}`);
    say(`  npx logbook runs events ${runId}`);
    say(`  npx logbook runs start support --input 'my order arrived damaged' --watch   # the answer as it streams`);
    say(`  curl -sN -H 'accept: text/event-stream' ${stack.apiUrl}/runs/${runId}/stream   # the run as Server-Sent Events`);
    say(`  curl -s ${stack.apiUrl}/runs -H 'content-type: application/json' -d '{"agent":"support","input":"hello"}'`);
    say('Press Ctrl-C to stop.');
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    say('\nStopping...');
    return 0;
  } finally {
    await stop();
  }
}
