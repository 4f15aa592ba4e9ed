/**
 * The support app's demo commands: `npm start` (the local stack, one run followed live, then keep
 * serving), `npm run demo -- [--runs N] [--chaos]` (N runs, worker kills, checks) and
 * `npm run demo:guarded` (signal, approval, follow-up and fork on a support-guarded run).
 */
import { processOutput, UsageError } from 'logbook/local';

const [command, ...rest] = process.argv.slice(2);
let code = 1;
try {
  if (command === 'start') code = await (await import('./start-command.js')).startCommand(rest, processOutput);
  else if (command === 'demo') code = await (await import('./demo-command.js')).demoCommand(rest, processOutput);
  else if (command === 'chaos') code = await (await import('./chaos-command.js')).chaosCommand(rest, processOutput);
  else if (command === 'guarded') code = await (await import('./guarded-command.js')).guardedCommand(rest, processOutput);
  else throw new UsageError(`unknown command "${command ?? ''}": start, demo, chaos or guarded`);
} catch (error) {
  const usage = error instanceof UsageError || (error instanceof Error && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'));
  processOutput.err(`support demo: ${error instanceof Error ? (usage ? error.message : (error.stack ?? error.message)) : String(error)}`);
  code = usage ? 2 : 1;
}
process.exit(code);
