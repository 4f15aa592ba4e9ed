// Plays the AWS Lambda Node.js runtime for one function bundle that `cdk synth` wrote, in plain
// Node: no tsx, no loader, no source condition, only the environment the parent gives it. Plain
// JavaScript on purpose: this process must load nothing but the artifact.
//
// Init phase, as the runtime does it: import the bundle's index.mjs, then (a worker handler has
// warm()) build Logbook's runtime the way the first invocation would. The timings go to the
// parent in the `ready` message. Then one invocation at a time over IPC, each with a Lambda
// context whose getRemainingTimeInMillis counts down the function's timeout.
import childProcess from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

// ARTIFACT_SPAWN_LOG: every child process the function starts is appended to that file (one JSON
// line: the function used, the command, its arguments), so a test can see what a bundle spawns.
const spawnLog = process.env.ARTIFACT_SPAWN_LOG;
if (spawnLog) {
  for (const name of ['spawn', 'spawnSync', 'fork', 'exec', 'execFile', 'execSync', 'execFileSync']) {
    const original = childProcess[name];
    childProcess[name] = function (...args) {
      appendFileSync(spawnLog, `${JSON.stringify({ fn: name, command: String(args[0]), args: Array.isArray(args[1]) ? args[1].map(String) : [] })}\n`);
      return original.apply(this, args);
    };
  }
  // ESM imports of node:child_process see the patched functions too.
  syncBuiltinESMExports();
}

const [bundle, functionName = 'function', memory = '512'] = process.argv.slice(2);
if (!bundle) throw new Error('usage: deployed-artifact-host.mjs <bundle/index.mjs> [functionName] [memoryMb]');

// performance.now() counts from the start of this process: what Node's own boot costs.
const bootMs = performance.now();
const mod = await import(pathToFileURL(bundle).href);
const importedAt = performance.now();
if (typeof mod.handler !== 'function') throw new Error(`${bundle} exports no handler function`);
if (typeof mod.handler.warm === 'function') await mod.handler.warm();
const readyAt = performance.now();
// CPU time of the whole init: on a shared machine a steadier figure than wall time.
const cpu = process.cpuUsage();

function context(timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: memory,
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `artifact/${process.pid}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

process.on('message', (message) => {
  if (message?.type !== 'invoke') return;
  Promise.resolve()
    .then(() => mod.handler(message.event, context(message.timeoutMs)))
    .then(
      (response) => process.send({ type: 'result', id: message.id, response }),
      (error) => process.send({ type: 'error', id: message.id, message: error instanceof Error ? error.message : String(error) }),
    );
});
// A sandbox never outlives the test that started it.
process.on('disconnect', () => process.exit(0));
process.send({
  type: 'ready',
  timings: {
    bootMs,
    importMs: importedAt - bootMs,
    warmMs: readyAt - importedAt,
    initMs: readyAt - bootMs,
    readyAtMs: readyAt,
    cpuMs: (cpu.user + cpu.system) / 1000,
  },
});
