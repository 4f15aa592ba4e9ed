import { ConfigError } from '../../core/errors.js';
import { canonicalJson, type JsonValue } from '../../core/json.js';
import type { AgentDefinition } from '../../authoring/types.js';
import type { EvalSide, EvalToolCall } from './eval-side.js';
import type { ServedCall } from './served-tools.js';

/** What a scorer is given for one run: both sides, the candidate agent, and the calls nothing answered. */
export interface ScorerInput {
  runId: string;
  recorded: EvalSide;
  candidate: EvalSide;
  /** The candidate agent as defined (its output schema, prompt, tools). */
  agent: AgentDefinition;
  /** Candidate calls the recorded run could not answer: not executed ("would call X(args)"). */
  wouldCall: readonly ServedCall[];
}

/** A score in [0, 1] (1: as good as the recorded run), or null when the scorer does not apply to this run. */
export interface ScoreResult {
  score: number | null;
  /** One line for people: what differed. */
  detail?: string;
  /** Numbers for scripts (deltas, counts), kept in the JSON report. */
  metrics?: Record<string, number>;
}

export type ScoreValue = number | null | ScoreResult;

/** A scorer the application writes: a function of the recorded and the new run (output, tool calls, cost). */
export interface Scorer {
  /** Lowercase, digits, `_` or `-`: a column of the table, a key of the report, a `--threshold` name. */
  name: string;
  score(input: ScorerInput): ScoreValue | Promise<ScoreValue>;
}

const NAME = /^[a-z][a-z0-9_-]{0,39}$/;

/** A scorer, checked: its name is a report key and a threshold name. */
export function defineScorer(scorer: Scorer): Scorer {
  if (!NAME.test(scorer.name)) throw new ConfigError(`scorer name "${scorer.name}" must match ${NAME}`);
  if (typeof scorer.score !== 'function') throw new ConfigError(`scorer ${scorer.name}: score must be a function`);
  return scorer;
}

/** A scorer's answer as a ScoreResult, or why it is not one (a score outside [0, 1] is the scorer's bug). */
export function scoreResult(value: ScoreValue): ScoreResult {
  const result: ScoreResult = typeof value === 'number' || value === null ? { score: value } : value;
  if (result.score !== null && !(typeof result.score === 'number' && result.score >= 0 && result.score <= 1)) {
    throw new ConfigError(`a score must be a number in [0, 1] or null, got ${String(result.score)}`);
  }
  return result;
}

const FINISHED = new Set(['completed', 'failed', 'cancelled']);

/**
 * `same_output`: 1 when the candidate ended as the recorded run did. Completed runs: the
 * structured output deep-equal (canonical JSON) when either has one, else the answer text equal.
 * Failed or cancelled runs: the same status and failure code. Null for a recorded run that has
 * not ended (nothing to compare against).
 */
export const sameOutput = (): Scorer =>
  defineScorer({
    name: 'same_output',
    score: ({ recorded, candidate }) => {
      if (!FINISHED.has(recorded.status)) return null;
      if (recorded.status !== candidate.status) {
        return { score: 0, detail: `recorded ${recorded.status}, candidate ${candidate.status}${candidate.failure ? ` (${candidate.failure.code})` : ''}` };
      }
      if (recorded.status !== 'completed') {
        const same = recorded.failure?.code === candidate.failure?.code;
        return { score: same ? 1 : 0, ...(same ? {} : { detail: `failure ${recorded.failure?.code} → ${candidate.failure?.code}` }) };
      }
      if (recorded.output !== undefined || candidate.output !== undefined) {
        const diff = firstDifference(recorded.output ?? null, candidate.output ?? null);
        return { score: diff === undefined ? 1 : 0, ...(diff === undefined ? {} : { detail: `output ${diff}` }) };
      }
      const same = recorded.answer === candidate.answer;
      return { score: same ? 1 : 0, ...(same ? {} : { detail: 'answer text differs' }) };
    },
  });

/**
 * `same_tool_calls`: the calls' names and arguments in order. 1 when identical; otherwise
 * 2·LCS / (recorded + candidate calls), LCS being the longest common subsequence, so one call
 * changed in five scores 0.8. The detail names the first difference.
 */
export const sameToolCalls = (): Scorer =>
  defineScorer({
    name: 'same_tool_calls',
    score: ({ recorded, candidate }) => {
      const a = recorded.toolCalls.map(callText);
      const b = candidate.toolCalls.map(callText);
      if (a.length === 0 && b.length === 0) return 1;
      const common = lcs(a, b);
      const score = (2 * common) / (a.length + b.length);
      if (score === 1) return 1;
      const at = a.findIndex((x, i) => x !== b[i]);
      const i = at === -1 ? a.length : at;
      const detail = `call ${i + 1}: ${a[i] ?? '(none)'} → ${b[i] ?? '(none)'}`;
      return { score, detail, metrics: { recordedCalls: a.length, candidateCalls: b.length, commonCalls: common } };
    },
  });

/**
 * `output_schema_valid`: 1 when the candidate completed with an output that fits the candidate
 * agent's output schema, 0 when it did not (it failed `output_invalid`, or ended otherwise). Null
 * for an agent without an output schema.
 */
export const outputSchemaValid = (): Scorer =>
  defineScorer({
    name: 'output_schema_valid',
    score: ({ candidate, agent }) => {
      if (!agent.outputSchema) return null;
      if (candidate.status !== 'completed')
        return { score: 0, detail: `no output: ${candidate.status}${candidate.failure ? ` (${candidate.failure.code})` : ''}` };
      const parsed = agent.outputSchema.safeParse(candidate.output);
      return parsed.success ? 1 : { score: 0, detail: 'the output does not fit the schema' };
    },
  });

/** `cost`: min(1, recorded / candidate cost): 1 when the candidate costs no more. Metrics: both and the delta (USD). */
export const costDelta = (): Scorer =>
  defineScorer({
    name: 'cost',
    score: ({ recorded, candidate }) => ratio(recorded.usage.costUsd, candidate.usage.costUsd, 'Usd'),
  });

/** `tokens`: min(1, recorded / candidate tokens, input + output). Metrics: both and the delta. */
export const tokensDelta = (): Scorer =>
  defineScorer({
    name: 'tokens',
    score: ({ recorded, candidate }) =>
      ratio(recorded.usage.inputTokens + recorded.usage.outputTokens, candidate.usage.inputTokens + candidate.usage.outputTokens, 'Tokens'),
  });

/** The built-in scorers, in the order the table shows them. */
export function builtInScorers(): Scorer[] {
  return [sameOutput(), sameToolCalls(), outputSchemaValid(), tokensDelta(), costDelta()];
}

function ratio(recorded: number, candidate: number, unit: 'Usd' | 'Tokens'): ScoreResult {
  const score = candidate <= recorded ? 1 : recorded / candidate;
  return { score, metrics: { [`recorded${unit}`]: recorded, [`candidate${unit}`]: candidate, [`delta${unit}`]: candidate - recorded } };
}

export function callText(call: Pick<EvalToolCall, 'name' | 'args' | 'argsError'>): string {
  return `${call.name}(${call.args === undefined ? '<invalid JSON>' : canonicalJson(call.args)})`;
}

function lcs(a: readonly string[], b: readonly string[]): number {
  let prev = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    const row = [0];
    for (let j = 0; j < b.length; j++) row.push(x === b[j] ? (prev[j] ?? 0) + 1 : Math.max(prev[j + 1] ?? 0, row[j] ?? 0));
    prev = row;
  }
  return prev[b.length] ?? 0;
}

/** Where two JSON values first differ (`.flight.number: "LB1" → "LB2"`), or undefined when equal. */
export function firstDifference(a: JsonValue, b: JsonValue, path = ''): string | undefined {
  if (canonicalJson(a) === canonicalJson(b)) return undefined;
  const objects = (v: JsonValue): v is { [k: string]: JsonValue } => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (objects(a) && objects(b)) {
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const d = firstDifference(a[key] ?? null, b[key] ?? null, `${path}.${key}`);
      if (d !== undefined) return d;
    }
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (let i = 0; i < a.length; i++) {
      const d = firstDifference(a[i] ?? null, b[i] ?? null, `${path}.${i}`);
      if (d !== undefined) return d;
    }
  }
  const show = (v: JsonValue) => {
    const t = canonicalJson(v);
    return t.length > 40 ? `${t.slice(0, 39)}…` : t;
  };
  return `${path || '(root)'}: ${show(a)} → ${show(b)}`;
}
