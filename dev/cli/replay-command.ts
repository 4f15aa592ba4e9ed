import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { checkReplay, type RecordedRun, type ReplayReport } from '../../lib/testing/replay-check.js';
import { checkWorkflowReplays, isWorkflowLog, workflowVerdictText, type WorkflowReplayReport } from '../../lib/testing/workflow-replay.js';
import { plural } from '../../lib/core/plural.js';
import { ConfigError } from '../../lib/core/errors.js';
import type { Agents } from '../../lib/authoring/define-agents.js';
import { loadAgentsModule } from '../local/agents-module.js';
import { DEFAULT_API, LogbookClient } from './api-client.js';
import { parseHeaders } from './api-access.js';
import { UsageError, type Output } from './output.js';
import { table, truncate } from './table.js';

export const REPLAY_USAGE = `usage:
  logbook replay-check --agents FILE [--api URL] [--header 'NAME: VALUE'] [--status S,S] [--out runs.jsonl] [--models IDS] [--json]
  logbook replay-check --agents FILE --file runs.jsonl [--models IDS] [--json]
  logbook replay-check [--api URL] [--status S,S] --out runs.jsonl      (record only)
  logbook replay-check --agents FILE (--file F | --api URL ...) --version V   (workflows: a new version against old runs)
  Before \`cdk deploy\`: would the agents in FILE strand runs that are not finished? Reads the
  logs of runs in the given statuses from the API (default ${DEFAULT_API}; statuses default
  running,waiting,parked) or a JSONL file (one run a line: {"runId","events"}; --out writes one),
  then for each run checks that the pinned tools (name + schema hash) and the pinned model can be
  served. --models: the model ids the worker may invoke, if you pass \`models\` to the Logbook
  construct (default: the ids the agents pin). --header (repeatable) is sent with every API
  request, e.g. --header "Authorization: Bearer $TOKEN" for a JWT-authorized API. openai: ids count as served when this shell sets
  OPENAI_BASE_URL or OPENAI_API_KEY, as the worker's environment must. Exit 1 when any run
  would be stranded.
  Workflow runs are replayed against the workflow code in FILE (the version each pinned, or
  --version V), executing nothing: recorded results are served, and the first operation the log
  cannot answer is where the replay stops ("would run"). Each run is ok, diverged at operation n
  (the kind and name the log holds vs what the code asked for), or missing version (it would park
  as missing_workflow_version). --file also reads a \`logbook runs export\` file (its blobs resolve
  bodies held by reference). Exit 1 when any workflow run diverges or its version is missing.`;

const OPTIONS = {
  agents: { type: 'string' },
  api: { type: 'string' },
  status: { type: 'string' },
  file: { type: 'string' },
  out: { type: 'string' },
  models: { type: 'string' },
  version: { type: 'string' },
  header: { type: 'string', multiple: true },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

const STATUSES = ['running', 'waiting', 'parked', 'completed', 'failed', 'cancelled'] as const;
const UNFINISHED = 'running,waiting,parked';
const recordedRunSchema = z.object({
  runId: z.string().min(1),
  events: z.array(z.unknown()),
  /** A run export file's payloads held by reference. */
  blobs: z.array(z.object({ key: z.string().min(1), text: z.string() })).optional(),
});
type RecordedWithBlobs = z.infer<typeof recordedRunSchema>;

export interface ReplayDeps {
  makeClient?: (api: string, headers: Record<string, string>) => Pick<LogbookClient, 'listRuns' | 'allEvents'>;
  loadAgents?: (file: string) => Promise<Agents>;
  env?: Record<string, string | undefined>;
}

/** `logbook replay-check ...`: returns the exit code (0 all served, 1 some run stranded, 2 usage). */
export async function replayCommand(argv: string[], io: Output, deps: ReplayDeps = {}): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  if (values.help) {
    io.out(REPLAY_USAGE);
    return 0;
  }
  // Phase 1: validate the command line before loading or fetching anything.
  if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
  if (values.file && (values.api || values.status || values.header)) throw new UsageError('use either --file, or --api with --status');
  if (values.file && values.out) throw new UsageError('--out records logs fetched from the API; with --file they are already recorded');
  if (!values.agents && !values.out)
    throw new UsageError('--agents FILE is required (the agents module about to be deployed), unless you only record with --out');
  const statuses = parseStatuses(values.status ?? UNFINISHED);

  // Phase 2: the recorded logs, from the file or the API (optionally written out).
  let runs: (RecordedRun | RecordedWithBlobs)[];
  if (values.file) runs = readJsonl(values.file);
  else {
    const makeClient = deps.makeClient ?? ((api: string, headers: Record<string, string>) => new LogbookClient(api, headers));
    const client = makeClient(values.api ?? DEFAULT_API, parseHeaders(values.header ?? []));
    runs = await fetchRuns(client, statuses);
    io.err(`fetched the logs of ${runs.length} run(s) in status ${statuses.join(', ')}`);
    if (values.out) writeJsonl(values.out, runs, io);
  }
  if (!values.agents) return 0;

  // Phase 3: check them against the agents about to be deployed, and report.
  const agents = await (deps.loadAgents ?? loadAgentsModule)(values.agents).catch((error: unknown) => {
    // A missing or malformed agents module is a mistake on the command line, not a crash.
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  });
  const report = checkReplay({
    agents,
    logs: runs.filter((r) => !isWorkflowLog(r.events)),
    env: deps.env ?? process.env,
    ...(values.models
      ? {
          deployedModelIds: values.models
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        }
      : {}),
  });
  const workflows = await checkWorkflowReplays({ agents, logs: runs, ...(values.version !== undefined ? { version: values.version } : {}) });
  if (values.json) io.out(JSON.stringify({ ...report, workflows }));
  else {
    if (report.runs.length > 0 || workflows.runs.length === 0) io.out(reportText(report));
    if (workflows.runs.length > 0) io.out(workflowText(workflows));
  }
  const workflowBad = workflows.diverged + workflows.missingVersion + workflows.unreadable;
  return report.stranded > 0 || workflowBad > 0 ? 1 : 0;
}

function parseStatuses(text: string): string[] {
  const list = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = list.filter((s) => !(STATUSES as readonly string[]).includes(s));
  if (list.length === 0 || bad.length > 0) throw new UsageError(`--status takes a comma-separated list of ${STATUSES.join(', ')}; got "${text}"`);
  return [...new Set(list)];
}

/** Every run in the given statuses (all list pages), each with its whole log (all event pages). */
async function fetchRuns(client: Pick<LogbookClient, 'listRuns' | 'allEvents'>, statuses: string[]): Promise<RecordedRun[]> {
  const ids: string[] = [];
  for (const status of statuses) {
    let cursor: string | undefined;
    do {
      const page = await client.listRuns({ status, limit: 100, ...(cursor ? { cursor } : {}) });
      ids.push(...page.runs.map((r) => r.runId));
      cursor = page.cursor;
    } while (cursor);
  }
  const out: RecordedRun[] = [];
  for (const runId of new Set(ids)) out.push({ runId, events: await client.allEvents(runId) });
  return out;
}

function readJsonl(file: string): RecordedRun[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read --file ${file}: ${(error as Error).message}`);
  }
  const runs: RecordedRun[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new UsageError(`${file} line ${i + 1}: not JSON (expected {"runId": "...", "events": [...]})`);
    }
    const parsed = recordedRunSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new UsageError(
        `${file} line ${i + 1}: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'invalid'} (expected {"runId": "...", "events": [...]})`,
      );
    }
    runs.push(parsed.data);
  });
  return runs;
}

function writeJsonl(out: string, runs: RecordedRun[], io: Output): void {
  const lines = runs.map((r) => JSON.stringify({ runId: r.runId, events: r.events }));
  if (out === '-') lines.forEach((l) => io.out(l));
  else {
    writeFileSync(out, lines.map((l) => `${l}\n`).join(''));
    io.err(`wrote ${runs.length} run log(s) to ${out}`);
  }
}

function workflowText(report: WorkflowReplayReport): string {
  const rows = report.runs.map((r) => [r.runId, `${r.workflow.name}@${r.checkedVersion}`, r.status, truncate(workflowVerdictText(r), 90)]);
  const lines = [table(['RUN', 'WORKFLOW', 'STATUS', 'VERDICT'], rows)];
  for (const r of report.runs.filter((x) => x.verdict !== 'ok')) lines.push('', `${r.runId}:`, `  - ${r.message}`);
  const bad = report.diverged + report.missingVersion + report.unreadable;
  lines.push(
    '',
    `${plural(report.runs.length, 'workflow run')}: ${report.ok} ok, ${report.diverged} diverged, ${report.missingVersion} missing version, ${report.unreadable} unreadable` +
      (bad > 0 ? ': this code would park the runs above' : ''),
  );
  return lines.join('\n');
}

function reportText(report: ReplayReport): string {
  const rows = report.runs.map((r) => [
    r.runId,
    r.agent ? `${r.agent.name}@${r.agent.version}` : '?',
    r.status,
    r.verdict === 'finished' ? 'finished (skipped)' : r.verdict,
    truncate(
      r.reasons
        .map((x) => (x.code === 'missing_tool' ? `missing_tool ${x.tool}` : x.code === 'missing_model' ? `missing_model ${x.modelId}` : x.code))
        .join(', '),
      60,
    ),
  ]);
  const lines = [table(['RUN', 'AGENT', 'STATUS', 'VERDICT', 'REASONS'], rows)];
  for (const r of report.runs.filter((x) => x.reasons.length > 0 || x.notes.length > 0)) {
    lines.push('', `${r.runId}:`);
    for (const reason of r.reasons) lines.push(`  - ${reason.message}`);
    for (const note of r.notes) lines.push(`  note: ${note}`);
  }
  lines.push(
    '',
    `${report.runs.length} run(s): ${report.ok} ok, ${report.stranded} stranded, ${report.finished} finished (skipped)` +
      (report.stranded > 0 ? ': deploying these agents would strand the runs above' : ''),
  );
  return lines.join('\n');
}
