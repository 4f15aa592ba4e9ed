import { parseArgs } from 'node:util';
import type { RunView } from '../../lib/api/schemas.js';
import { readFile } from 'node:fs/promises';
import { ApiError, DEFAULT_API, LogbookClient } from './api-client.js';
import { UsageError, type Output } from './output.js';
import { readRunInput } from './run-input.js';
import { keyValues, table, truncate } from './table.js';
import { withAttachments } from './attach.js';

export const CONTROL_USAGE = `  logbook runs approve RUN_ID --call CALL_ID --decision approve|reject|edit [--args JSON] [--args-hash H] [--comment TEXT]
  logbook runs signal RUN_ID --signal NAME [--payload JSON|@PATH]   (also: logbook signal RUN_ID NAME [--payload JSON|@PATH])
  logbook runs message RUN_ID --input TEXT_OR_JSON | --input-file PATH [--attach [FIELD=]PATH]... [--message-id ID]
  logbook runs fork RUN_ID --at SEQ | --before-op N [--run-id ID] [--input TEXT_OR_JSON | --input-file PATH] [--version V]`;

export const CONTROL_VERBS: ReadonlySet<string> = new Set(['approve', 'signal', 'message', 'fork']);

const OPTIONS = {
  api: { type: 'string' },
  json: { type: 'boolean', default: false },
  call: { type: 'string' },
  decision: { type: 'string' },
  args: { type: 'string' },
  'args-hash': { type: 'string' },
  comment: { type: 'string' },
  signal: { type: 'string' },
  payload: { type: 'string' },
  input: { type: 'string' },
  'input-file': { type: 'string' },
  'message-id': { type: 'string' },
  attach: { type: 'string', multiple: true },
  at: { type: 'string' },
  'before-op': { type: 'string' },
  'run-id': { type: 'string' },
  version: { type: 'string' },
} as const;

function json(text: string, name: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`--${name} must be JSON (quote strings: '"text"')`);
  }
}

/** A signal's payload: JSON, or `@PATH` for a file holding JSON (a JSON text never starts with `@`). */
async function payloadOption(text: string | undefined): Promise<unknown> {
  if (text === undefined) return {};
  if (!text.startsWith('@')) return json(text, 'payload');
  const file = text.slice(1);
  let body: string;
  try {
    body = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--payload @${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw new UsageError(`--payload @${file} must hold JSON`);
  }
}

/** The API's refusal of a signal, with what to do about it: the run waits for another signal, or the payload misfits. */
function signalRefusal(error: unknown, runId: string): unknown {
  if (!(error instanceof ApiError)) return error;
  const code = error.body?.error.code;
  if (error.status === 409 && code === 'signal_not_awaited') {
    return new ApiError(error.status, error.body, `${error.message}\n  nothing was queued; \`logbook runs show ${runId}\` lists what the run waits for`);
  }
  if (error.status === 400) {
    return new ApiError(error.status, error.body, `${error.message}\n  nothing was queued; the payload must fit the schema the waiting call or operation pinned`);
  }
  return error;
}

/**
 * Where `fork --before-op N` forks a workflow run: just before operation N's first event, so N
 * and everything after it run again under the fork's keys (the API refuses a point where another
 * operation is in flight, naming it).
 */
async function seqBeforeOp(client: LogbookClient, runId: string, op: number): Promise<number> {
  const { operations } = await client.allOperations(runId);
  const found = operations.find((o) => o.op === op);
  if (!found) throw new UsageError(`${runId} has no operation ${op} (it has ${operations.length === 0 ? 'none yet' : `1 to ${Math.max(...operations.map((o) => o.op))}`})`);
  return found.seq - 1;
}

/** `logbook runs approve|signal|message|fork ...`: returns the exit code. */
export async function controlCommand(argv: string[], io: Output, makeClient = (api: string) => new LogbookClient(api)): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [verb, runId, ...extra] = positionals;
  // `signal RUN_ID NAME`: the signal's name may be the positional after the run id.
  const signalName = verb === 'signal' ? extra[0] : undefined;
  const rest = signalName !== undefined ? extra.slice(1) : extra;
  if (rest.length > 0) throw new UsageError(`unexpected arguments: ${rest.join(' ')}`);
  if (!runId) throw new UsageError(`logbook runs ${verb} needs a RUN_ID`);
  const client = makeClient(values.api ?? DEFAULT_API);
  const print = (out: Record<string, unknown>, text: string) => io.out(values.json ? JSON.stringify({ runId, ...out }) : text);
  switch (verb) {
    case 'approve': {
      const decision = values.decision;
      if (!values.call || !decision) throw new UsageError('approve needs --call CALL_ID and --decision approve|reject|edit');
      if (decision !== 'approve' && decision !== 'reject' && decision !== 'edit') throw new UsageError('--decision must be approve, reject or edit');
      if (decision === 'edit' && values.args === undefined) throw new UsageError('--decision edit needs --args JSON (the arguments to run instead)');
      if (decision !== 'edit' && values.args !== undefined) throw new UsageError('--args goes with --decision edit');
      const out = await client.approve(runId, {
        callId: values.call,
        decision,
        ...(values.args !== undefined ? { args: json(values.args, 'args') } : {}),
        ...(values['args-hash'] ? { argsHash: values['args-hash'] } : {}),
        ...(values.comment ? { comment: values.comment } : {}),
      });
      print(out, `${decision} queued for call ${values.call} of ${runId} (inbox ${out.inboxId})`);
      return 0;
    }
    case 'signal': {
      if (signalName !== undefined && values.signal !== undefined) throw new UsageError('name the signal once: `signal RUN_ID NAME` or `--signal NAME`');
      const signal = signalName ?? values.signal;
      if (!signal) throw new UsageError('signal needs a NAME: logbook signal RUN_ID NAME [--payload JSON|@PATH]');
      const payload = await payloadOption(values.payload);
      const out = await client.signal(runId, { signal, payload }).catch((error: unknown) => {
        throw signalRefusal(error, runId);
      });
      print(out, `signal ${signal} queued for call ${out.callId} of ${runId} (inbox ${out.inboxId})`);
      return 0;
    }
    case 'message': {
      const read = await readRunInput(values.input, values['input-file']);
      if (read === undefined) throw new UsageError('message needs --input TEXT_OR_JSON or --input-file PATH');
      const { input, refs } = await withAttachments(client, read, values.attach);
      const out = await client.message(runId, { input, ...(values['message-id'] ? { messageId: values['message-id'] } : {}) });
      const attached = refs.map((r) => `, attached ${r.name ?? r.sha256.slice(0, 12)}`).join('');
      print(refs.length > 0 ? { ...out, attachments: refs } : out, `message queued for ${runId} (inbox ${out.inboxId}${attached})`);
      return 0;
    }
    case 'fork': {
      if ((values.at === undefined) === (values['before-op'] === undefined)) {
        throw new UsageError('fork needs --at SEQ (a turn boundary, or a seq where no operation is in flight) or --before-op N (a workflow run)');
      }
      const n = Number(values.at ?? values['before-op']);
      if (!Number.isInteger(n) || n < 1) throw new UsageError(`${values.at !== undefined ? '--at' : '--before-op'} must be a positive integer`);
      // Validated before anything is sent, as for `runs start`.
      const input = await readRunInput(values.input, values['input-file']);
      const atSeq = values.at !== undefined ? n : await seqBeforeOp(client, runId, n);
      const out = await client.fork(runId, {
        atSeq,
        ...(values['run-id'] ? { runId: values['run-id'] } : {}),
        ...(input !== undefined ? { input } : {}),
        ...(values.version ? { version: values.version } : {}),
      });
      if (values.json) io.out(JSON.stringify(out));
      else io.out(keyValues([['run', out.runId], ['forked from', `${out.forkedFrom.runId} at seq ${out.forkedFrom.seq}`], ['status', out.status], ['created', out.created ? 'yes' : 'no (existing fork)']]));
      return 0;
    }
    default:
      throw new UsageError(`unknown command "runs ${verb}"`);
  }
}

/** For `runs show`: what the run waits for, and the command that answers each. */
export function waitingLines(run: RunView): string[] {
  const waiting = run.waiting ?? [];
  if (waiting.length === 0) return [];
  const lines = [
    '\nwaiting for:',
    table(
      ['CALL', 'TOOL', 'KIND', 'UNTIL', 'DETAIL'],
      waiting.map((w) => [
        w.callId,
        w.tool,
        w.kind,
        w.until ?? '',
        w.kind === 'approval' ? truncate(JSON.stringify(w.args ?? null), 70) : w.kind === 'child' ? `child ${w.childRunId ?? ''} ${w.childStatus ?? ''}`.trim() : (w.signal ?? ''),
      ]),
    ),
  ];
  for (const w of waiting) {
    if (w.kind === 'approval') {
      lines.push(`\napprove with: logbook runs approve ${run.runId} --call ${w.callId} --decision approve|reject|edit [--args JSON] [--comment TEXT]`);
    } else if (w.kind === 'signal') {
      lines.push(`\nsignal with:  logbook runs signal ${run.runId} --signal ${w.signal} --payload JSON`);
    } else if (w.kind === 'child' && w.childRunId) {
      lines.push(`\nthe child:    logbook runs show ${w.childRunId}`);
    }
  }
  return lines;
}
