import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isAgents, type Agents } from '../../lib/authoring/define-agents.js';
import { ConfigError, errorMessage } from '../../lib/core/errors.js';
import type { ModelResolver } from '../../lib/ports/model-client.js';
import { parseRunFile, type ExportedRun } from '../../lib/testing/eval/run-file.js';
import { runEval } from '../../lib/testing/eval/run-eval.js';
import { defineScorer, type Scorer } from '../../lib/testing/eval/scorers.js';
import { API_FLAGS, apiClient, type ApiAccessDeps } from './api-access.js';
import { parseCommandArgs, type FlagSpecs } from './args.js';
import { evalReportText } from './eval-text.js';
import { UsageError, type Output } from './output.js';
import { EVAL_USAGE } from './eval-usage.js';
import { collectRuns, FILTER_FLAGS, parseFilter } from './run-collect.js';

const FLAGS = {
  agents: { type: 'string', value: 'FILE' },
  version: { type: 'string', value: 'V' },
  file: { type: 'string', value: 'PATH' },
  scorers: { type: 'string', value: 'FILE' },
  'min-score': { type: 'string', value: 'X' },
  threshold: { type: 'string', value: 'NAME=X', multiple: true },
  'allow-read-only': { type: 'boolean', default: false },
  report: { type: 'string', value: 'FILE' },
  concurrency: { type: 'string', value: 'N' },
  json: { type: 'boolean', default: false },
  all: { type: 'boolean', default: false },
  rows: { type: 'string', value: 'N' },
  help: { type: 'boolean', short: 'h', default: false },
  ...FILTER_FLAGS,
  ...API_FLAGS,
} as const satisfies FlagSpecs;

export interface EvalDeps extends ApiAccessDeps {
  /** Built-in model providers for ids the candidate does not supply (default: from the environment, as the worker). */
  models?: ModelResolver;
  now?: () => number;
}

function fraction(text: string, what: string): number {
  const n = Number(text);
  if (text.trim() === '' || !(n >= 0 && n <= 1)) throw new UsageError(`${what} must be a number from 0 to 1, got "${text}"`);
  return n;
}

/** Import a module the user names (TypeScript under tsx, or JavaScript); a missing file is a usage mistake. */
async function importModule(path: string, flag: string): Promise<Record<string, unknown>> {
  const file = resolve(path);
  if (!existsSync(file)) throw new UsageError(`--${flag} ${path} not found (looked at ${file})`);
  return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
}

/** The candidate: the agents module's export, kept as a function when it is one (built once per run). */
async function loadCandidate(path: string): Promise<Agents | (() => Promise<Agents>)> {
  const mod = await importModule(path, 'agents');
  const exported = mod.default ?? mod.agents;
  if (isAgents(exported)) return exported;
  if (typeof exported !== 'function')
    throw new UsageError(`--agents ${path}: its default export (or \`agents\`) must be defineAgents(...) or a function returning it`);
  return async () => {
    const built: unknown = await (exported as () => unknown)();
    if (!isAgents(built)) throw new ConfigError(`--agents ${path}: its export did not return the value of defineAgents(...)`);
    return built;
  };
}

async function loadScorers(path: string): Promise<Scorer[]> {
  const mod = await importModule(path, 'scorers');
  const exported = mod.default ?? mod.scorers;
  const list = Array.isArray(exported) ? (exported as unknown[]) : exported === undefined ? [] : [exported];
  if (list.length === 0) throw new UsageError(`--scorers ${path} exports no scorers: \`export default [defineScorer({ name, score })]\``);
  try {
    return list.map((s) => defineScorer(s as Scorer));
  } catch (error) {
    throw new UsageError(`--scorers ${path}: ${errorMessage(error)}`);
  }
}

/** `logbook eval ...`: returns the exit code. */
export async function evalCommand(argv: string[], io: Output, deps: EvalDeps = {}): Promise<number> {
  const { values, positionals } = parseCommandArgs('logbook eval', argv, FLAGS);
  if (values.help) {
    io.out(EVAL_USAGE);
    return 0;
  }
  // Phase 1: the command line, checked before anything is loaded or fetched.
  if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
  if (!values.agents) throw new UsageError('logbook eval needs --agents FILE: the candidate agents module');
  const fromApi = ['api', 'header', 'sigv4', 'region', ...Object.keys(FILTER_FLAGS)].filter((f) => (values as Record<string, unknown>)[f] !== undefined);
  if (values.file && fromApi.length > 0) throw new UsageError(`--file takes the runs from a file: drop --${fromApi.join(', --')}`);
  const minScore = values['min-score'] === undefined ? undefined : fraction(values['min-score'], '--min-score');
  const thresholds: Record<string, number> = {};
  for (const t of values.threshold ?? []) {
    const [name, value] = t.split('=');
    if (!name || value === undefined) throw new UsageError(`--threshold takes NAME=X, got "${t}"`);
    thresholds[name.trim()] = fraction(value, `--threshold ${name}`);
  }
  const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency > 0)) throw new UsageError('--concurrency must be a positive integer');
  const rows = values.rows === undefined ? undefined : Number(values.rows);
  if (rows !== undefined && !(Number.isInteger(rows) && rows >= 0)) throw new UsageError('--rows must be a non-negative integer');
  const filter = values.file ? undefined : parseFilter(values, ['completed'], deps.now?.() ?? Date.now());

  // Phase 2: the recorded runs, the candidate and the scorers.
  let runs: ExportedRun[];
  if (values.file) {
    let text: string;
    try {
      text = readFileSync(values.file, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read --file ${values.file}: ${(error as Error).message}`);
    }
    runs = parseRunFile(text, values.file);
  } else {
    const client = await apiClient(values, deps);
    runs = await collectRuns(client, filter!);
    io.err(`fetched ${runs.length} recorded run(s) from ${client.baseUrl}`);
  }
  const candidate = await loadCandidate(values.agents);
  const scorers = values.scorers ? await loadScorers(values.scorers) : [];
  const models = deps.models ?? (await providerModels(io));

  // Phase 3: replay and score, then the report.
  const started = performance.now();
  const report = await runEval({
    runs,
    candidate,
    scorers,
    allowReadOnlyTools: values['allow-read-only'],
    ...(values.version ? { version: values.version } : {}),
    ...(minScore !== undefined ? { minScore } : {}),
    ...(Object.keys(thresholds).length > 0 ? { thresholds } : {}),
    ...(models ? { models } : {}),
    ...(concurrency ? { concurrency } : {}),
    onRun: (_r, done, total) => {
      if (io.tty) io.err(`\u001b[2K\reval ${done}/${total}`);
    },
  }).catch((error: unknown) => {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  });
  const seconds = (performance.now() - started) / 1000;
  const reportFile = values.report ?? '.logbook/eval-report.json';
  mkdirSync(dirname(resolve(reportFile)), { recursive: true });
  writeFileSync(reportFile, `${JSON.stringify(report, null, 2)}\n`);
  if (values.json) io.out(JSON.stringify(report));
  else io.out(evalReportText(report, { all: values.all, ...(rows !== undefined ? { rows } : {}) }));
  const rate = seconds > 0 ? report.counts.runs / seconds : 0;
  io.err(`evaluated ${report.counts.runs} run(s) in ${seconds.toFixed(2)} s (${rate.toFixed(1)} runs/s); report: ${reportFile}`);
  return report.passed ? 0 : 1;
}

/** The built-in providers the worker would use (bedrock:, openai:), from this shell's environment. */
async function providerModels(io: Output): Promise<ModelResolver | undefined> {
  try {
    const { modelsFromEnv } = await import('../../lib/models/model-config.js');
    return modelsFromEnv(process.env).resolver;
  } catch (error) {
    io.err(`logbook eval: no built-in model providers (${errorMessage(error)}); the candidate's own models only`);
    return undefined;
  }
}
