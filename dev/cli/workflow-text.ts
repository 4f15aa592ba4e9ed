import type { OperationView, WorkflowList } from '../../lib/api/workflow-schemas.js';
import { formatTime, table, truncate } from './table.js';

/** What a started or finished operation is about, in a few words: what it waits for, its error, its result. */
function operationDetail(op: OperationView): string {
  if (op.waitsFor) {
    const what = op.waitsFor.kind === 'signal' ? `signal ${op.waitsFor.signal ?? ''}` : op.waitsFor.kind;
    return `waits for ${what}${op.deadline ? ` until ${formatTime(op.deadline)}` : ''}`;
  }
  if (op.error) return truncate(`${op.error.code}: ${op.error.message}`, 60);
  if (op.status === 'retrying') return `next attempt at ${formatTime(op.retryAt)}`;
  const by = op.sentBy ? ` by ${op.sentBy}` : '';
  const result = op.result === undefined ? '' : `: ${JSON.stringify(op.result)}`;
  return op.source ? truncate(`from ${op.source}${by}${result}`, 60) : '';
}

/** For `runs show` of a workflow run: its operations, one a row (GET /runs/{id}/operations). */
export function operationsText(operations: OperationView[]): string {
  if (operations.length === 0) return '\noperations: none yet';
  return [
    '\noperations:',
    table(
      ['OP', 'KIND', 'NAME', 'STATUS', 'ATTEMPTS', 'STARTED', 'ENDED', 'CHILD RUN', 'DETAIL'],
      operations.map((op) => [
        op.op,
        op.kind,
        truncate(op.name, 40),
        op.status,
        op.attempt,
        formatTime(op.startedAt),
        formatTime(op.endedAt),
        op.child?.runId ?? '',
        operationDetail(op),
      ]),
    ),
  ].join('\n');
}

/** For `logbook workflows`: each registered workflow version, the latest marked. */
export function workflowsText(list: WorkflowList): string {
  if (list.workflows.length === 0) return 'no workflows registered';
  return table(
    ['WORKFLOW', 'VERSION', 'LATEST', 'INPUT', 'DESCRIPTION'],
    list.workflows.flatMap((w) =>
      w.versions.map((v) => [
        w.workflow,
        v.version,
        v.version === w.latest ? 'yes' : '',
        v.input ? `schema ${v.input.sha256.slice(0, 12)}` : 'any',
        truncate(v.description ?? '', 60),
      ]),
    ),
  );
}
