/**
 * A worker process of test/unit/templates/service-state.test.ts, over the template's file state:
 * `count PATH N [GO]` adds N entries one transaction each (once the file GO exists); `restart PATH KEY [kill]` restarts a service
 * under KEY through the template's OpsServices and prints the result, or SIGKILLs itself right
 * after the write, before it could answer; `die-holding PATH` dies inside a transaction.
 */
import { existsSync } from 'node:fs';
import { fileState } from '../../../templates/project/src/service-state.js';
import { OpsServices, emptyOpsState } from '../../../templates/project/src/services.js';

const [command, path = '', arg, flag] = process.argv.slice(2);

if (command === 'count') {
  const state = fileState<{ entries: string[] }>(path, { entries: [] });
  // With a go file: say so, and start only when it exists, so that two children write at once.
  if (flag) {
    process.stdout.write('ready\n');
    while (!existsSync(flag)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
  }
  for (let i = 0; i < Number(arg); i++) state.transact((s) => void s.entries.push(`${process.pid}:${i}`));
} else if (command === 'restart') {
  const services = new OpsServices(fileState(path, emptyOpsState()));
  const result = services.restart('checkout', arg ?? '');
  if (flag === 'kill') process.kill(process.pid, 'SIGKILL');
  process.stdout.write(JSON.stringify(result));
} else if (command === 'die-holding') {
  fileState<{ entries: string[] }>(path, { entries: [] }).transact((s) => {
    s.entries.push('never written');
    process.kill(process.pid, 'SIGKILL');
  });
}
