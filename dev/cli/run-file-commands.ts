import { readFileSync, writeFileSync } from 'node:fs';
import { formatRunFile, parseRunFile } from '../../lib/testing/eval/run-file.js';
import { ApiError, DEFAULT_API, LogbookClient } from './api-client.js';
import { API_FLAGS, apiClient, type ApiAccessDeps } from './api-access.js';
import { parseCommandArgs, type FlagSpecs } from './args.js';
import { UsageError, type Output } from './output.js';
import { RUN_FILE_USAGE } from './eval-usage.js';
import { collectRuns, FILTER_FLAGS, parseFilter } from './run-collect.js';
import { table } from './table.js';

const EXPORT_FLAGS = {
  out: { type: 'string', value: 'FILE' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  ...FILTER_FLAGS,
  ...API_FLAGS,
} as const satisfies FlagSpecs;
const IMPORT_FLAGS = {
  api: { type: 'string', value: 'URL' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies FlagSpecs;

export interface RunFileDeps extends ApiAccessDeps {
  now?: () => number;
  makeClient?: (api: string) => Pick<LogbookClient, 'importRuns'>;
}

/** `logbook runs export|import ...`: returns the exit code. */
export async function runFileCommand(argv: string[], io: Output, deps: RunFileDeps = {}): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === 'export') {
    const { values, positionals } = parseCommandArgs('logbook runs export', rest, EXPORT_FLAGS);
    if (values.help) return usage(io);
    if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
    const filter = parseFilter(values, ['completed', 'failed', 'cancelled'], deps.now?.() ?? Date.now());
    const client = await apiClient(values, deps);
    const runs = await collectRuns(client, filter, (done, total) => {
      if (io.tty) io.err(`\u001b[2K\rexported ${done}/${total}`);
    });
    const text = formatRunFile(runs);
    if (values.out && values.out !== '-') {
      writeFileSync(values.out, text);
      io.err(`wrote ${runs.length} run(s) to ${values.out}`);
    } else if (text) io.out(text.trimEnd());
    return 0;
  }
  const { values, positionals } = parseCommandArgs('logbook runs import', rest, IMPORT_FLAGS);
  if (values.help) return usage(io);
  const [file, ...extra] = positionals;
  if (!file) throw new UsageError('logbook runs import needs a FILE (written by `logbook runs export`)');
  if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  // Checked here first: a bad line is named before anything is sent.
  const count = parseRunFile(text, file).length;
  const client = (deps.makeClient ?? ((api) => new LogbookClient(api)))(values.api ?? DEFAULT_API);
  const result = await client.importRuns(text).catch((error: unknown) => {
    if (error instanceof ApiError && (error.status === 404 || error.status === 405)) {
      throw new UsageError(`${values.api ?? DEFAULT_API} has no import route: runs import into the local stack (\`logbook dev\`) only`);
    }
    throw error;
  });
  if (values.json) io.out(JSON.stringify(result));
  else {
    const rows = [...result.imported.map((id) => [id, 'imported', '']), ...result.skipped.map((s) => [s.runId, 'skipped', s.reason])];
    if (rows.length > 0) io.out(table(['RUN', 'RESULT', 'WHY'], rows));
    io.out(`${result.imported.length} of ${count} run(s) imported`);
  }
  return 0;
}

function usage(io: Output): number {
  io.out(`usage:\n${RUN_FILE_USAGE}`);
  return 0;
}
