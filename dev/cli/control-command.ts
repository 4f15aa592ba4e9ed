import { parseArgs } from 'node:util';
import type { RunView } from '../../lib/api/schemas.js';
import { DEFAULT_API, LogbookClient } from './api-client.js';
import { UsageError, type Output } from './output.js';
import { readRunInput } from './run-input.js';
import { keyValues, table, truncate } from './table.js';
import { withAttachments } from './attach.js';

export const CONTROL_USAGE = `  logbook runs approve RUN_ID --call CALL_ID --decision approve|reject|edit [--args JSON] [--args-hash H] [--comment TEXT]
  logbook runs signal RUN_ID --signal NAME [--payload JSON]
  logbook runs message RUN_ID --input TEXT_OR_JSON | --input-file PATH [--attach [FIELD=]PATH]... [--message-id ID]
  logbook runs fork RUN_ID --at SEQ [--run-id ID] [--input TEXT_OR_JSON | --input-file PATH] [--version V]`;

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

/** `logbook runs approve|signal|message|fork ...`: returns the exit code. */
export async function controlCommand(argv: string[], io: Output, makeClient = (api: string) => new LogbookClient(api)): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [verb, runId, ...rest] = positionals;
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
      if (!values.signal) throw new UsageError('signal needs --signal NAME');
      const out = await client.signal(runId, { signal: values.signal, payload: values.payload === undefined ? {} : json(values.payload, 'payload') });
      print(out, `signal ${values.signal} queued for call ${out.callId} of ${runId} (inbox ${out.inboxId})`);
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
      const at = Number(values.at);
      if (values.at === undefined || !Number.isInteger(at) || at < 1) throw new UsageError('fork needs --at SEQ (a positive integer: a turn boundary)');
      // Validated before anything is sent, as for `runs start`.
      const input = await readRunInput(values.input, values['input-file']);
      const out = await client.fork(runId, {
        atSeq: at,
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
