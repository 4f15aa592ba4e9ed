import { dateTime, pretty, truncate } from './format.js';
import type { Operation } from './types.js';

/** One row of a workflow run's operations table: every cell as plain text (results are untrusted). */
export interface OperationRow {
  op: number;
  callId: string;
  kind: string;
  name: string;
  status: string;
  attempts: string;
  started: string;
  ended: string;
  /** The result (JSON text), the error (`code: message`), or what the operation waits for. */
  outcome: string;
  /** For ctx.agent / ctx.workflow: the child run, linked to its page. */
  child?: { runId: string; label: string };
}

const RESULT_CHARS = 500;

/** What the table shows for one operation. Pure: the page renders it, a test checks it. */
export function operationRow(o: Operation): OperationRow {
  const waits = o.waitsFor
    ? `waits for ${o.waitsFor.kind === 'signal' ? `signal ${o.waitsFor.signal ?? ''}` : o.waitsFor.kind}${o.deadline ? ` until ${dateTime(o.deadline)}` : ''}`
    : '';
  const error = o.error ? `${o.error.code}: ${o.error.message}` : '';
  const outcome =
    o.status === 'succeeded'
      ? o.result === undefined
        ? '(no value)'
        : truncate(pretty(o.result), RESULT_CHARS)
      : o.status === 'failed'
        ? error
        : o.status === 'retrying'
          ? `last attempt threw ${error}${o.retryAt ? `; next at ${dateTime(o.retryAt)}` : ''}`
          : waits;
  const by = [o.source ? `from ${o.source}` : '', o.sentBy ? `by ${o.sentBy}` : ''].filter(Boolean).join(' ');
  return {
    op: o.op,
    callId: o.callId,
    kind: o.kind,
    name: o.name,
    status: o.status,
    attempts: o.kind === 'step' ? `${o.attempt}${o.policy ? ` (${o.policy})` : ''}` : '',
    started: o.startedAt ? dateTime(o.startedAt) : '',
    ended: o.endedAt ? dateTime(o.endedAt) : '',
    outcome: by && o.status !== 'started' ? `${outcome} (${by})` : outcome,
    ...(o.child ? { child: { runId: o.child.runId, label: `${o.child.kind} ${o.child.name}@${o.child.version}` } } : {}),
  };
}
