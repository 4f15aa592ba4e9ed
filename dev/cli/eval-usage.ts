/**
 * The usage texts of `logbook eval` and `logbook runs export|import`, kept apart from the
 * commands so that printing usage loads none of the eval machinery.
 */
import { RUN_STATUSES } from '../../lib/ports/run-heads.js';
import { DEFAULT_API } from './api-client.js';

export const API_USAGE = `--api URL (default ${DEFAULT_API}); a deployed stack's https:// execute-api URL is signed with your
  AWS credentials (SigV4; --sigv4 for a custom domain, --region R when the URL does not say); a JWT
  authorizer takes LOGBOOK_TOKEN or --header 'Authorization: Bearer ...' (repeatable --header)`;

export const FILTER_USAGE = `--status S,S (${RUN_STATUSES.join(', ')}), --agent NAME, --agent-version V,
  --since/--until TIME (ISO time, or 30m, 24h, 7d ago), --run RUN_ID (repeatable), --limit N (newest first)`;

export const RUN_FILE_USAGE = `  logbook runs export [filters] [--out FILE]   recorded runs as JSON lines (one run a line: its events, the
      payloads they reference and the files its input refers to; redacted as the log holds them);
      default status completed,failed,cancelled; stdout unless --out
      ${FILTER_USAGE}
      ${API_USAGE}
  logbook runs import FILE [--api URL]   into the local stack (\`logbook dev\`), under its tenant; finished and
      parked runs only (a running one would be resumed there); a run id already there is skipped`;

export const EVAL_USAGE = `logbook eval --agents FILE [--version V] (--file runs.jsonl | [--api URL] [filters]) [--scorers FILE]
             [--min-score X] [--threshold NAME=X]... [--allow-read-only] [--report FILE] [--json] [--all | --rows N]
  What would another agent version do on recorded runs? Each run's input (and follow-up messages)
  is replayed against the candidate in FILE (an agents module: \`export default defineAgents(...)\`,
  or a function returning it, called once per run) in an isolated memory world. The candidate's
  tool calls are answered from the recorded results (same tool, same arguments; repeats in order);
  a call the log cannot answer is never executed: it is reported as "would call X(args)" and the
  candidate sees an error result. --allow-read-only executes rerun-policy tools instead (off by
  default). Scores: same_output, same_tool_calls, output_schema_valid, tokens, cost, plus the
  scorers FILE exports (default export or \`scorers\`: an array of defineScorer(...)).
  Runs: a run file (\`logbook runs export\`), or from the API (default status completed):
  ${FILTER_USAGE}
  ${API_USAGE}
  Prints the runs that did not score 1 (at most --rows, default 20; --all: every run) and the totals;
  writes the JSON report to --report (default .logbook/eval-report.json); --json prints it.
  Exit 0 when every threshold holds (--min-score: the mean run score; --threshold NAME=X: a
  scorer's mean), 1 when one does not or a run could not be evaluated, 2 on a usage mistake.`;
