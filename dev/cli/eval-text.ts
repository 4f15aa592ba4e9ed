import { canonicalJson } from '../../lib/core/json.js';
import type { EvalReport, EvalRunResult } from '../../lib/testing/eval/eval-report.js';
import { table, truncate } from './table.js';

/** Built-in scorers by their short column names; the application's keep their own names. */
const COLUMNS: Record<string, string> = { same_output: 'OUTPUT', same_tool_calls: 'CALLS', output_schema_valid: 'SCHEMA' };
const DELTAS = new Set(['tokens', 'cost']);

const score = (value: number | null | undefined) => (value === null || value === undefined ? '-' : value.toFixed(2));

function delta(result: EvalRunResult, name: 'tokens' | 'cost'): string {
  const metrics = result.scores[name]?.metrics;
  const d = metrics?.[name === 'tokens' ? 'deltaTokens' : 'deltaUsd'];
  if (d === undefined) return '-';
  const sign = d > 0 ? '+' : d < 0 ? '-' : '±';
  return name === 'tokens' ? `${sign}${Math.abs(d)}` : `${sign}$${Math.abs(d).toFixed(4)}`;
}

function wouldCall(result: EvalRunResult): string {
  const [first, ...rest] = result.wouldCall;
  if (!first) return '';
  return `${truncate(`${first.tool}(${canonicalJson(first.args)})`, 90)}${rest.length > 0 ? ` +${rest.length}` : ''}`;
}

/**
 * The report for people: one row per run that did not score 1 (all with `all`, at most `rows`),
 * then the totals, each scorer's mean, the thresholds and the verdict. Scripts read --json.
 */
export function evalReportText(report: EvalReport, options: { all?: boolean; rows?: number } = {}): string {
  const names = report.scorers.map((s) => s.name);
  const headers = ['RUN', 'CANDIDATE', 'SCORE', ...names.map((n) => (DELTAS.has(n) ? `Δ${n.toUpperCase()}` : (COLUMNS[n] ?? n.toUpperCase()))), 'WOULD CALL'];
  const listed = report.runs.filter((r) => options.all || r.status !== 'evaluated' || r.score === null || r.score < 1);
  const rows = options.rows ?? 20;
  const shown = options.all ? listed : listed.slice(0, rows);
  const lines: string[] = [];
  if (shown.length > 0) {
    lines.push(
      table(
        headers,
        shown.map((r) => [
          r.runId,
          r.status === 'evaluated' ? (r.candidate?.status ?? '') : `${r.status}: ${r.reason?.code ?? ''}`,
          score(r.score),
          ...names.map((n) => (DELTAS.has(n) ? delta(r, n as 'tokens' | 'cost') : r.scores[n]?.error ? 'threw' : score(r.scores[n]?.score))),
          wouldCall(r),
        ]),
      ),
    );
  }
  if (listed.length > shown.length) lines.push(`… ${listed.length - shown.length} more below 1 (--all lists every run; the report file has them all)`);
  const perfect = report.runs.filter((r) => r.status === 'evaluated' && r.score === 1).length;
  if (listed.length === 0 && report.runs.length > 0) lines.push('every run scored 1.00');
  else if (!options.all && perfect > 0) lines.push(`${perfect} run(s) scored 1.00 (not listed)`);
  const first = listed.find((r) => r.status === 'evaluated' && r.score !== null && r.score < 1);
  const details = first ? Object.entries(first.scores).filter(([, s]) => s.detail || s.error) : [];
  if (first && details.length > 0) lines.push(`${first.runId}: ${details.map(([n, s]) => `${n}: ${s.error ? `threw ${s.error}` : s.detail}`).join('; ')}`);
  const c = report.counts;
  lines.push(
    `${c.runs} run(s): ${c.evaluated} evaluated, ${c.skipped} skipped, ${c.errors} error(s); calls: ${c.served} served from the log, ${c.notExecuted} not executed, ${c.executed} executed (read-only)`,
  );
  lines.push(`score ${score(report.score)}  ${report.scorers.map((s) => `${s.name} ${score(s.mean)}`).join('  ')}`);
  for (const r of report.runs.filter((x) => x.status !== 'evaluated').slice(0, 5)) lines.push(`${r.runId} ${r.status}: ${r.reason?.message ?? ''}`);
  lines.push(
    report.passed
      ? `PASSED${report.thresholds.length > 0 ? ` (${report.thresholds.map((t) => `${t.name} ≥ ${t.min}`).join(', ')})` : ''}`
      : `FAILED: ${report.failures.join('; ')}`,
  );
  return lines.join('\n');
}
