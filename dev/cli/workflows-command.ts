import { DEFAULT_API, LogbookClient } from './api-client.js';
import { parseCommandArgs, type FlagSpecs } from './args.js';
import { UsageError, type Output } from './output.js';
import { workflowsText } from './workflow-text.js';

export const WORKFLOWS_USAGE = `usage:
  logbook workflows [--api URL] [--json]   the registered workflows, each version and the input it takes (GET /workflows)
  logbook runs start --workflow NAME [--version V] --input JSON | --input-file PATH   a workflow run (as an agent run, see below)
  logbook signal RUN_ID NAME [--payload JSON|@PATH] [--api URL] [--json]   a signal a workflow's waitForSignal (or a signal tool) waits for`;

const FLAGS = {
  api: { type: 'string', value: 'URL' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies FlagSpecs;

/** `logbook workflows`: returns the exit code. */
export async function workflowsCommand(argv: string[], io: Output, makeClient = (api: string) => new LogbookClient(api)): Promise<number> {
  const { values, positionals } = parseCommandArgs('logbook workflows', argv, FLAGS);
  if (values.help) {
    io.out(WORKFLOWS_USAGE);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
  const list = await makeClient(values.api ?? DEFAULT_API).workflows();
  io.out(values.json ? JSON.stringify(list) : workflowsText(list));
  return 0;
}
