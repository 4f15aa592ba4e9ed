import { LogbookClient, DEFAULT_API } from './api-client.js';
import { firstPositional, parseCommandArgs, type FlagSpecs, type ParsedArgs } from './args.js';
import { CONTROL_USAGE, CONTROL_VERBS, controlCommand, waitingLines } from './control-command.js';
import { describeEvent } from './event-text.js';
import { UsageError, type Output } from './output.js';
import { readRunInput } from './run-input.js';
import { runText } from './run-text.js';
import { formatTime, formatUsd, keyValues, table, truncate } from './table.js';
import { followRun } from './watch-command.js';
import { withAttachments } from './attach.js';
import { operationsText } from './workflow-text.js';
import { RUN_FILE_USAGE } from './eval-usage.js';

export const RUNS_USAGE = `usage:
  logbook runs start AGENT --input TEXT_OR_JSON | --input-file PATH [--attach [FIELD=]PATH]... [--run-id ID] [--version V] [--budgets JSON] [--watch [--until-done]]
  logbook runs start --workflow NAME --input ... [same options]   a workflow run (AGENT may also be given as --agent NAME; exactly one of the two)
  logbook runs watch RUN_ID [--after SEQ] [--until-done]   print events and the answer text as they land (GET /runs/{id}/stream); exit 0 completed, 3 failed, 4 cancelled, 5 parked
  logbook runs list [--status S] [--parent RUN_ID] [--limit N] [--cursor C]   --parent: the child runs of that run
  logbook runs show RUN_ID   a workflow run: with its operations (GET /runs/{id}/operations; --json: \`operations\`)
  logbook runs events RUN_ID [--after SEQ] [--limit N]
  logbook runs cancel RUN_ID [--reason TEXT]
  logbook runs resolve RUN_ID --call CALL_ID --outcome succeeded|failed|rerun [--result JSON]
  logbook runs resolve RUN_ID --action retry|fail
${CONTROL_USAGE}
${RUN_FILE_USAGE}
options: --api URL (default ${DEFAULT_API}), --json (machine-readable output)`;

/** Flags every `runs` command takes. */
const COMMON = {
  api: { type: 'string', value: 'URL' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies FlagSpecs;

interface Context {
  client: LogbookClient;
  io: Output;
  json: boolean;
  /** The positional after the command word: a run id, or the agent for `start`. */
  target: string | undefined;
  verb: string;
}

type MakeClient = (api: string) => LogbookClient;

/**
 * A `runs` command: its own flags (any other is refused, naming these) and what it does. The
 * shared flags and positionals are parsed here, typed by the command's flags.
 */
function command<const F extends FlagSpecs>(flags: F, run: (ctx: Context, values: ParsedArgs<F & typeof COMMON>['values']) => Promise<void | number>) {
  // The command's own flags first: that is the order a usage message lists them in.
  const all = { ...flags, ...COMMON } as F & typeof COMMON;
  return {
    flags: all,
    async execute(verb: string, argv: string[], io: Output, makeClient: MakeClient): Promise<number> {
      const { values, positionals } = parseCommandArgs(`logbook runs ${verb}`, argv, all);
      const common = values as ParsedArgs<typeof COMMON>['values'];
      if (common.help) {
        io.out(RUNS_USAGE);
        return 0;
      }
      const [, target, ...rest] = positionals;
      if (rest.length > 0) throw new UsageError(`unexpected arguments: ${rest.join(' ')}`);
      // A command may answer with its own exit code (watch: how the run ended). Only a number is
      // one: whatever else slips through (`process.stdout.write`'s `true`) must not reach
      // `process.exit`, which throws on it after the output was printed.
      const code: unknown = await run({ client: makeClient(common.api ?? DEFAULT_API), io, json: common.json, target, verb }, values);
      return typeof code === 'number' ? code : 0;
    },
  };
}

function intOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a non-negative integer`);
  return n;
}

/** The run's input for `runs start`, which needs one (run-input.ts). */
async function runInput(inline: string | undefined, file: string | undefined): Promise<unknown> {
  const input = await readRunInput(inline, file);
  if (input === undefined) throw new UsageError('logbook runs start needs --input TEXT_OR_JSON or --input-file PATH');
  return input;
}

function parseJsonOption(text: string, name: string, hint?: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`--${name} must be JSON${hint ? ` (${hint})` : ''}`);
  }
}

/** What `runs start` runs: an agent (positional or --agent) or a workflow (--workflow), exactly one. */
function startDefinition(positional: string | undefined, agent: string | undefined, workflow: string | undefined): { agent: string } | { workflow: string } {
  if (positional !== undefined && agent !== undefined) throw new UsageError('name the agent once: `runs start AGENT` or `runs start --agent AGENT`');
  const agentName = agent ?? positional;
  if (agentName !== undefined && workflow !== undefined) {
    throw new UsageError('give an agent or --workflow NAME, not both: a run runs one agent or one workflow');
  }
  if (workflow !== undefined) return { workflow };
  if (agentName !== undefined) return { agent: agentName };
  throw new UsageError('logbook runs start needs an AGENT (or --agent NAME) or --workflow NAME');
}

function needId(ctx: Context): string {
  if (!ctx.target) throw new UsageError(`logbook runs ${ctx.verb} needs a RUN_ID`);
  return ctx.target;
}

const COMMANDS = {
  start: command(
    {
      input: { type: 'string', value: 'TEXT_OR_JSON' },
      'input-file': { type: 'string', value: 'PATH' },
      'run-id': { type: 'string', value: 'ID' },
      version: { type: 'string', value: 'V' },
      budgets: { type: 'string', value: 'JSON' },
      watch: { type: 'boolean' },
      'until-done': { type: 'boolean' },
      attach: { type: 'string', value: '[FIELD=]PATH', multiple: true },
      agent: { type: 'string', value: 'NAME' },
      workflow: { type: 'string', value: 'NAME' },
    },
    async ({ client, io, json, target }, values) => {
      const definition = startDefinition(target, values.agent, values.workflow);
      const { input, refs } = await withAttachments(client, await runInput(values.input, values['input-file']), values.attach);
      const started = await client.startRun({
        ...definition,
        input,
        ...(values['run-id'] ? { runId: values['run-id'] } : {}),
        ...(values.version ? { version: values.version } : {}),
        ...(values.budgets ? { budgets: parseJsonOption(values.budgets, 'budgets') as Record<string, number> } : {}),
      });
      if (values.watch) {
        io.err(`run ${started.runId} ${started.created ? 'created' : 'already exists with this request'}`);
        return followRun(client, started.runId, io, { json, untilDone: Boolean(values['until-done']) });
      }
      if (json) io.out(JSON.stringify(refs.length > 0 ? { ...started, attachments: refs } : started));
      else {
        const attached = refs.map((r): [string, string] => ['attached', `${r.name ?? r.sha256.slice(0, 12)} (${r.mediaType}, ${r.bytes} bytes)`]);
        io.out(keyValues([['run', started.runId], ['status', started.status], ['created', started.created ? 'yes' : 'no (existing run)'], ...attached]));
      }
    },
  ),
  watch: command({ after: { type: 'string', value: 'SEQ' }, 'until-done': { type: 'boolean' } }, async (ctx, values) =>
    followRun(ctx.client, needId(ctx), ctx.io, { json: ctx.json, untilDone: Boolean(values['until-done']), after: intOption(values.after, 'after') ?? 0 }),
  ),
  list: command(
    {
      status: { type: 'string', value: 'S' },
      parent: { type: 'string', value: 'RUN_ID' },
      limit: { type: 'string', value: 'N' },
      cursor: { type: 'string', value: 'C' },
    },
    async ({ client, io, json }, values) => {
      const limit = intOption(values.limit, 'limit');
      const page = await client.listRuns({
        ...(values.status ? { status: values.status } : {}),
        ...(values.parent ? { parent: values.parent } : {}),
        ...(limit ? { limit } : {}),
        ...(values.cursor ? { cursor: values.cursor } : {}),
      });
      if (json) {
        io.out(JSON.stringify(page));
        return;
      }
      io.out(
        table(
          ['RUN', 'STATUS', 'AGENT', 'STEPS', 'TOKENS', 'COST', 'UPDATED', 'SUMMARY'],
          page.runs.map((r) => [
            r.runId,
            r.status,
            `${r.agent.name}@${r.agent.version}${r.kind === 'workflow' ? ' (workflow)' : ''}`,
            r.usage.steps,
            r.usage.inputTokens + r.usage.outputTokens,
            formatUsd(r.usage.costUsd),
            formatTime(r.updatedAt),
            truncate(r.summary ?? '', 50),
          ]),
        ),
      );
      if (page.cursor) io.out(`more: --cursor ${page.cursor}`);
    },
  ),
  show: command({}, async (ctx) => {
    const run = await ctx.client.getRun(needId(ctx));
    // A workflow run's operations: what it did and what it waits for, step by step.
    const operations = run.kind === 'workflow' ? (await ctx.client.allOperations(run.runId)).operations : undefined;
    if (ctx.json) {
      ctx.io.out(JSON.stringify(operations ? { ...run, operations } : run));
      return;
    }
    ctx.io.out(runText(run, Date.now()));
    if (operations) ctx.io.out(operationsText(operations));
    for (const line of waitingLines(run)) ctx.io.out(line);
  }),
  events: command({ after: { type: 'string', value: 'SEQ' }, limit: { type: 'string', value: 'N' } }, async (ctx, values) => {
    const after = intOption(values.after, 'after') ?? 0;
    const limit = intOption(values.limit, 'limit') ?? 100;
    const page = await ctx.client.events(needId(ctx), after, limit);
    if (ctx.json) {
      ctx.io.out(JSON.stringify(page));
      return;
    }
    ctx.io.out(
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
    if (page.next !== undefined) ctx.io.out(`more: --after ${page.next}`);
  }),
  cancel: command({ reason: { type: 'string', value: 'TEXT' } }, async (ctx, values) => {
    const id = needId(ctx);
    const out = await ctx.client.cancel(id, values.reason);
    ctx.io.out(ctx.json ? JSON.stringify({ runId: id, ...out }) : `cancel requested for ${id} (inbox ${out.inboxId})`);
  }),
  resolve: command(
    {
      call: { type: 'string', value: 'CALL_ID' },
      outcome: { type: 'string', value: 'succeeded|failed|rerun' },
      result: { type: 'string', value: 'JSON' },
      action: { type: 'string', value: 'retry|fail' },
    },
    async (ctx, values) => {
      const id = needId(ctx);
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
      const out = await ctx.client.resolve(id, body);
      ctx.io.out(ctx.json ? JSON.stringify({ runId: id, ...out }) : `resolution queued for ${id} (inbox ${out.inboxId})`);
    },
  ),
};

/** Every flag of every command: only to find the command word among the arguments. */
const ALL_FLAGS: FlagSpecs = Object.assign({}, ...Object.values(COMMANDS).map((c) => c.flags));

/** `logbook runs ...`: returns the exit code. */
export async function runsCommand(argv: string[], io: Output, makeClient: MakeClient = (api) => new LogbookClient(api)): Promise<number> {
  // approve, signal, message, fork: their own options (control-command.ts).
  if (argv[0] !== undefined && CONTROL_VERBS.has(argv[0])) return controlCommand(argv, io, makeClient);
  // export, import: run files (run-file-commands.ts).
  if (argv[0] === 'export' || argv[0] === 'import') {
    const { runFileCommand } = await import('./run-file-commands.js');
    return runFileCommand(argv, io);
  }
  const verb = firstPositional(argv, ALL_FLAGS);
  if (verb === undefined) {
    const { values } = parseCommandArgs('logbook runs', argv, COMMON);
    io.out(RUNS_USAGE);
    return values.help ? 0 : 2;
  }
  if (!Object.hasOwn(COMMANDS, verb)) throw new UsageError(`unknown command "runs ${verb}"\n${RUNS_USAGE}`);
  return COMMANDS[verb as keyof typeof COMMANDS].execute(verb, argv, io, makeClient);
}
