import { parseArgs } from 'node:util';
import { LogbookClient, DEFAULT_API } from './api-client.js';
import { CONTROL_USAGE, CONTROL_VERBS, controlCommand, waitingLines } from './control-command.js';
import { describeEvent } from './event-text.js';
import { UsageError, type Output } from './output.js';
import { formatTime, formatUsd, keyValues, table, truncate } from './table.js';

export const RUNS_USAGE = `usage:
  logbook runs start AGENT --input TEXT_OR_JSON [--run-id ID] [--version V] [--budgets JSON]
  logbook runs list [--status S] [--limit N] [--cursor C]
  logbook runs show RUN_ID
  logbook runs events RUN_ID [--after SEQ] [--limit N]
  logbook runs cancel RUN_ID [--reason TEXT]
  logbook runs resolve RUN_ID --call CALL_ID --outcome succeeded|failed|rerun [--result JSON]
  logbook runs resolve RUN_ID --action retry|fail
${CONTROL_USAGE}
options: --api URL (default ${DEFAULT_API}), --json (machine-readable output)`;

const OPTIONS = {
  api: { type: 'string' },
  json: { type: 'boolean', default: false },
  status: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  after: { type: 'string' },
  reason: { type: 'string' },
  call: { type: 'string' },
  outcome: { type: 'string' },
  result: { type: 'string' },
  action: { type: 'string' },
  input: { type: 'string' },
  'run-id': { type: 'string' },
  version: { type: 'string' },
  budgets: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

function intOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a non-negative integer`);
  return n;
}

/** Input is JSON when it parses as JSON, else the text itself. */
function parseLoose(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function parseJsonOption(text: string, name: string, hint?: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`--${name} must be JSON${hint ? ` (${hint})` : ''}`);
  }
}

/** `logbook runs ...`: returns the exit code. */
export async function runsCommand(argv: string[], io: Output, makeClient = (api: string) => new LogbookClient(api)): Promise<number> {
  // approve, signal, message, fork: their own options (control-command.ts).
  if (argv[0] !== undefined && CONTROL_VERBS.has(argv[0])) return controlCommand(argv, io, makeClient);
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  if (values.help || positionals.length === 0) {
    io.out(RUNS_USAGE);
    return values.help ? 0 : 2;
  }
  const [verb, runId, ...rest] = positionals;
  if (rest.length > 0) throw new UsageError(`unexpected arguments: ${rest.join(' ')}`);
  const client = makeClient(values.api ?? DEFAULT_API);
  const json = values.json;
  const needId = (): string => {
    if (!runId) throw new UsageError(`logbook runs ${verb} needs a RUN_ID`);
    return runId;
  };

  switch (verb) {
    case 'start': {
      // The positional is the agent name here, not a run id.
      const agent = runId;
      if (!agent) throw new UsageError('logbook runs start needs an AGENT');
      if (values.input === undefined) throw new UsageError('logbook runs start needs --input');
      const started = await client.startRun({
        agent,
        input: parseLoose(values.input),
        ...(values['run-id'] ? { runId: values['run-id'] } : {}),
        ...(values.version ? { version: values.version } : {}),
        ...(values.budgets ? { budgets: parseJsonOption(values.budgets, 'budgets') as Record<string, number> } : {}),
      });
      if (json) io.out(JSON.stringify(started));
      else io.out(keyValues([['run', started.runId], ['status', started.status], ['created', started.created ? 'yes' : 'no (existing run)']]));
      return 0;
    }
    case 'list': {
      const limit = intOption(values.limit, 'limit');
      const page = await client.listRuns({
        ...(values.status ? { status: values.status } : {}),
        ...(limit ? { limit } : {}),
        ...(values.cursor ? { cursor: values.cursor } : {}),
      });
      if (json) io.out(JSON.stringify(page));
      else {
        io.out(
          table(
            ['RUN', 'STATUS', 'AGENT', 'STEPS', 'TOKENS', 'COST', 'UPDATED', 'SUMMARY'],
            page.runs.map((r) => [
              r.runId,
              r.status,
              `${r.agent.name}@${r.agent.version}`,
              r.usage.steps,
              r.usage.inputTokens + r.usage.outputTokens,
              formatUsd(r.usage.costUsd),
              formatTime(r.updatedAt),
              truncate(r.summary ?? '', 50),
            ]),
          ),
        );
        if (page.cursor) io.out(`more: --cursor ${page.cursor}`);
      }
      return 0;
    }
    case 'show': {
      const run = await client.getRun(needId());
      if (json) {
        io.out(JSON.stringify(run));
        return 0;
      }
      io.out(
        keyValues([
          ['run', run.runId],
          ['status', run.status],
          ['agent', `${run.agent.name}@${run.agent.version}`],
          ['model', run.pinned?.model],
          ['prompt', run.pinned ? `${run.pinned.prompt.version} (${run.pinned.prompt.sha256.slice(0, 12)})` : undefined],
          ['tools', run.pinned?.tools.map((t) => `${t.name}@${t.version}:${t.wait ? `waits for a ${t.wait}` : t.policy}${t.approval ? '+approval' : ''}`).join(', ')],
          ['steps', run.usage.steps],
          ['tokens', `${run.usage.inputTokens} in, ${run.usage.outputTokens} out`],
          ['cost', formatUsd(run.usage.costUsd)],
          ['created', formatTime(run.createdAt)],
          ['updated', formatTime(run.updatedAt)],
          ['last seq', run.lastSeq],
          ['result', run.result === undefined ? undefined : truncate(typeof run.result === 'string' ? run.result : JSON.stringify(run.result), 200)],
          ['failure', run.failure ? `${run.failure.code}: ${run.failure.message}` : undefined],
          ['park', run.park ? `${run.park.reason}: ${run.park.detail}` : undefined],
          ['forked from', run.forkedFrom ? `${run.forkedFrom.runId} at seq ${run.forkedFrom.seq}` : undefined],
        ]),
      );
      if (run.attention.length > 0) {
        io.out('\nneeds attention:');
        io.out(table(['SEQ', 'REASON', 'CALL', 'DETAIL'], run.attention.map((a) => [a.seq, a.reason, a.callId ?? '(run)', a.detail])));
        const call = run.attention.find((a) => a.callId)?.callId;
        io.out(
          call
            ? `\nresolve with: logbook runs resolve ${run.runId} --call ${call} --outcome succeeded|failed|rerun [--result JSON]`
            : `\nresolve with: logbook runs resolve ${run.runId} --action retry|fail`,
        );
      }
      for (const line of waitingLines(run)) io.out(line);
      return 0;
    }
    case 'events': {
      const after = intOption(values.after, 'after') ?? 0;
      const limit = intOption(values.limit, 'limit') ?? 100;
      const page = await client.events(needId(), after, limit);
      if (json) io.out(JSON.stringify(page));
      else {
        io.out(
          table(
            ['SEQ', 'TYPE', 'AT', 'EPOCH', 'WHAT'],
            page.events.map((e) => [
              e.seq as number,
              String(e.type),
              typeof e.at === 'number' ? formatTime(new Date(e.at).toISOString()) : '',
              (e.by as { epoch?: number } | undefined)?.epoch,
              describeEvent(e),
            ]),
          ),
        );
        if (page.next !== undefined) io.out(`more: --after ${page.next}`);
      }
      return 0;
    }
    case 'cancel': {
      const id = needId();
      const out = await client.cancel(id, values.reason);
      io.out(json ? JSON.stringify({ runId: id, ...out }) : `cancel requested for ${id} (inbox ${out.inboxId})`);
      return 0;
    }
    case 'resolve': {
      const id = needId();
      let body: Parameters<LogbookClient['resolve']>[1];
      if (values.action) {
        if (values.call || values.outcome) throw new UsageError('use either --action, or --call with --outcome');
        if (values.action !== 'retry' && values.action !== 'fail') throw new UsageError('--action must be retry or fail');
        body = { action: values.action };
      } else {
        if (!values.call || !values.outcome) throw new UsageError('resolve needs --call CALL_ID and --outcome, or --action');
        const outcome = values.outcome;
        if (outcome !== 'succeeded' && outcome !== 'failed' && outcome !== 'rerun') {
          throw new UsageError('--outcome must be succeeded, failed or rerun');
        }
        const result = values.result === undefined ? undefined : parseJsonOption(values.result, 'result', `quote strings: '"done"'`);
        body = { callId: values.call, outcome, ...(result !== undefined ? { result } : {}) };
      }
      const out = await client.resolve(id, body);
      io.out(json ? JSON.stringify({ runId: id, ...out }) : `resolution queued for ${id} (inbox ${out.inboxId})`);
      return 0;
    }
    default:
      throw new UsageError(`unknown command "runs ${verb}"\n${RUNS_USAGE}`);
  }
}
