import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { publicErrorText } from '../../lib/api/error-text.js';
import { ApiError } from './api-client.js';
import { isParseArgsError } from './args.js';
import { INIT_USAGE, initCommand } from './init-command.js';
import { UsageError, processOutput, type Output } from './output.js';
import { REPLAY_USAGE, replayCommand } from './replay-command.js';
import { EVAL_USAGE } from './eval-usage.js';
import { RUNS_USAGE, runsCommand } from './runs-command.js';
import { DEV_USAGE } from './usage.js';
import { controlCommand } from './control-command.js';
import { WORKFLOWS_USAGE, workflowsCommand } from './workflows-command.js';

/** An API error with its issues, or a stack trace: longer than one message, still bounded. */
const MAX_CLI_ERROR_CHARS = 4_000;

export const USAGE = `logbook: durable LLM agent runs on AWS serverless, and locally on emulators

usage:
  logbook dev --agents FILE [--port N]           the local stack on your agents (emulators, API, worker, sweeper)
  logbook init DIR [--name NAME] [--logbook SPEC]  a new project that depends on logbook (default: this one, packed into DIR/vendor/)
  logbook inspect --api URL [--token-stdin] [--port N]  the web inspector for a deployed stack, on 127.0.0.1
  logbook runs ...                               runs of the local API (or --api URL)
  logbook workflows                              the workflows the API runs (defineWorkflow), each version
  logbook signal RUN_ID NAME [--payload JSON|@PATH]  send a signal a run waits for
  logbook replay-check --agents FILE ...         before a deploy: would these agents strand unfinished runs?
  logbook eval --agents FILE ...                 what would this agent version do on recorded runs? (scored, never executed)

${REPLAY_USAGE}

${EVAL_USAGE}

${DEV_USAGE}

${INIT_USAGE}

${WORKFLOWS_USAGE}

${RUNS_USAGE}`;

/** Dispatch a command line; resolves to the exit code. */
export async function main(argv: string[], io: Output = processOutput): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'runs':
        return await runsCommand(rest, io);
      case 'workflows':
        return await workflowsCommand(rest, io);
      case 'signal':
        return await controlCommand(['signal', ...rest], io);
      case 'init':
        return await initCommand(rest, io);
      case 'inspect': {
        const { inspectCommand } = await import('./inspect-command.js');
        return await inspectCommand(rest, io);
      }
      case 'dev': {
        const { devCommand } = await import('./dev-command.js');
        return await devCommand(rest, io);
      }
      case 'replay-check':
        return await replayCommand(rest, io);
      case 'eval': {
        const { evalCommand } = await import('./eval-command.js');
        return await evalCommand(rest, io);
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.out(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    // What is printed holds no storage key, no secret and no unbounded echo of the arguments (api/error-text.ts).
    if (error instanceof UsageError || isParseArgsError(error)) {
      io.err(`logbook: ${publicErrorText((error as Error).message)}`);
      io.err('run `logbook help` for usage');
      return 2;
    }
    if (error instanceof ApiError) {
      io.err(`logbook: ${publicErrorText(error.message, undefined, MAX_CLI_ERROR_CHARS)}`);
      return 1;
    }
    io.err(`logbook: ${publicErrorText(error instanceof Error ? (error.stack ?? error.message) : String(error), undefined, MAX_CLI_ERROR_CHARS)}`);
    return 1;
  }
}

/** Run the CLI as a process: exit with the command's code once it is done (servers included). */
export async function runAsProcess(argv: string[] = process.argv.slice(2)): Promise<never> {
  // Set here, not on import: importing `logbook/local` leaves the environment alone.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  let code = 1;
  try {
    code = await main(argv);
  } catch (error) {
    console.error(error);
  }
  process.exit(code);
}

const entry = process.argv[1] ? pathToFileURL(resolve(process.argv[1])).href : '';
if (import.meta.url === entry) void runAsProcess();
