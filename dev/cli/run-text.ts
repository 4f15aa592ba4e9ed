import type { RunView } from '../../lib/api/schemas.js';
import { formatTime, formatUsd, keyValues, table, truncate } from './table.js';
import { plural } from '../../lib/core/plural.js';

const count = (n: number) => n.toLocaleString('en-US');

/** `used of limit`, or just what was used when the run's budgets are not known. */
function budgetLine(used: string, limit: string | undefined): string {
  return limit === undefined ? used : `${used} of ${limit}`;
}

/**
 * What `logbook runs show` prints: identity, pinned versions, each budget as used of its limit
 * (steps, input and output tokens, cost, and the deadline), the outcome, its parent and child
 * runs (agentTool), and open attention with the command that answers it.
 */
export function runText(run: RunView, now: number): string {
  const b = run.budgets;
  const lines = [
    keyValues([
      ['run', run.runId],
      ['status', run.status],
      [run.kind === 'workflow' ? 'workflow' : 'agent', `${run.agent.name}@${run.agent.version}`],
      ['forked from', run.forkedFrom ? `${run.forkedFrom.runId} at seq ${run.forkedFrom.seq}` : undefined],
      ['parent', run.parent ? `${run.parent.runId} (call ${run.parent.callId})` : undefined],
      ['model', run.pinned?.model],
      ['prompt', run.pinned ? `${run.pinned.prompt.version} (${run.pinned.prompt.sha256.slice(0, 12)})` : undefined],
      ['tools', run.pinned?.tools.map((t) => `${t.name}@${t.version}:${t.policy}`).join(', ')],
      ['output schema', run.pinned?.output ? `${run.pinned.output.schemaHash.slice(0, 12)} (at most ${plural(run.pinned.output.maxRepairs, 'repair')})` : undefined],
      ['steps', budgetLine(count(run.usage.steps), b && count(b.maxSteps))],
      ['input tokens', budgetLine(count(run.usage.inputTokens), b && count(b.maxInputTokens))],
      ['output tokens', budgetLine(count(run.usage.outputTokens), b && count(b.maxOutputTokens))],
      ['cost', budgetLine(formatUsd(run.usage.costUsd), b && formatUsd(b.maxCostUsd))],
      ['deadline', b ? deadlineText(b.deadlineAt, FINISHED.has(run.status) ? undefined : now) : undefined],
      ['created', formatTime(run.createdAt)],
      ['updated', formatTime(run.updatedAt)],
      ['last seq', run.lastSeq],
      ['result', run.result === undefined ? undefined : truncate(typeof run.result === 'string' ? run.result : JSON.stringify(run.result), 200)],
      ['failure', run.failure ? `${run.failure.code}: ${run.failure.message}` : undefined],
      ['park', run.park ? `${run.park.reason}: ${run.park.detail}` : undefined],
    ]),
  ];
  // The structured output whole, as JSON: it is what a program reads (`--json` has it as `output`).
  if (run.output !== undefined) lines.push(`\noutput:\n${JSON.stringify(run.output, null, 2)}`);
  if (run.children?.length) {
    lines.push('\nchild runs:');
    lines.push(table(['RUN', 'CALL', 'STATUS', 'SUMMARY'], run.children.map((c) => [c.runId, c.callId, c.status, truncate(c.summary ?? '', 60)])));
  }
  if (run.unresolved?.length) {
    lines.push(`\nunresolved when cancelled: ${run.unresolved.join(', ')} (check by hand whether each took effect; nothing in the run answers them now)`);
  }
  if (run.attention.length > 0) {
    lines.push('\nneeds attention:');
    lines.push(table(['SEQ', 'REASON', 'CALL', 'DETAIL'], run.attention.map((a) => [a.seq, a.reason, a.callId ?? '(run)', a.detail])));
    const call = run.attention.find((a) => a.callId)?.callId;
    lines.push(
      call
        ? `\nresolve with: logbook runs resolve ${run.runId} --call ${call} --outcome succeeded|failed|rerun [--result JSON]`
        : `\nresolve with: logbook runs resolve ${run.runId} --action retry|fail`,
    );
  }
  return lines.join('\n');
}

const FINISHED = new Set(['completed', 'failed', 'cancelled']);

/** The absolute deadline, and how far it is from now for a run that may still work. */
function deadlineText(deadlineAt: number, now: number | undefined): string {
  const at = formatTime(new Date(deadlineAt).toISOString());
  if (now === undefined) return at;
  const left = deadlineAt - now;
  return left > 0 ? `${at} (in ${duration(left)})` : `${at} (passed)`;
}

function duration(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return `${Math.ceil(ms / 1000)}s`;
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h ${minutes % 60}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}
