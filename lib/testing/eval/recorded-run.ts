import type { Body } from '../../core/body.js';
import { errorMessage } from '../../core/errors.js';
import { parseEvent } from '../../core/events.js';
import type { JsonValue } from '../../core/json.js';
import type { RunState } from '../../core/state.js';
import { readLog } from '../replay-reasons.js';
import { followUps, sideOf, type EvalSide } from './eval-side.js';
import type { ExportedRun } from './run-file.js';

/** Why a run was not evaluated: skipped (a kind runEval does not replay yet) or an error (its log or payloads cannot be read). */
export interface EvalRunProblem {
  status: 'skipped' | 'error';
  code: string;
  message: string;
}

/** A recorded run, read: its folded state, its side for the scorers, and what the candidate is given (input, follow-ups). */
export interface RecordedRead {
  events: readonly unknown[];
  state: RunState;
  side: EvalSide;
  input: JsonValue;
  messages: JsonValue[];
}

/**
 * The kind of run a log records. Agent runs are what runEval replays; a workflow run (the
 * workflow engine writes its own first event, or marks run_started with a `kind`) is refused by
 * name for now, never folded as if it were an agent's.
 */
export function runKindProblem(first: unknown): EvalRunProblem | undefined {
  const e = (first ?? {}) as { type?: unknown; kind?: unknown; workflow?: unknown };
  const kind =
    typeof e.kind === 'string' ? e.kind : e.workflow !== undefined || (typeof e.type === 'string' && e.type.startsWith('workflow')) ? 'workflow' : 'agent';
  if (kind === 'agent') return undefined;
  return {
    status: 'skipped',
    code: 'unsupported_run_kind',
    message: `a ${kind} run: evals replay agent runs only (a ${kind} run's steps are its own code, not a model's calls); it was not evaluated`,
  };
}

const decoder = new TextDecoder();

/** Resolve a payload of the recorded run from the blobs its export carries (by key, then by sha256). */
export function fileResolver(run: Pick<ExportedRun, 'blobs'>): (body: Body) => Promise<JsonValue> {
  const byKey = new Map(run.blobs.map((b) => [b.key, b.text]));
  const bySha = new Map(run.blobs.map((b) => [b.sha256, b.text]));
  return async (body) => {
    if (body.kind === 'inline') return body.value;
    const text = byKey.get(body.key) ?? bySha.get(body.sha256);
    if (text === undefined) throw new MissingPayloadError(body.key);
    return JSON.parse(text) as JsonValue;
  };
}

class MissingPayloadError extends Error {
  constructor(readonly key: string) {
    super(`the payload ${key} is referenced by the log but not in the export`);
  }
}

/** Read one recorded run, or say why it cannot be evaluated. */
export async function readRecorded(run: ExportedRun): Promise<RecordedRead | EvalRunProblem> {
  const kind = runKindProblem(run.events[0]);
  if (kind) return kind;
  const read = readLog(run.events);
  if ('reasons' in read) {
    const first = read.reasons[0];
    return { status: 'error', code: first?.code ?? 'corrupt_log', message: read.reasons.map((r) => r.message).join('; ') };
  }
  const resolve = fileResolver(run);
  try {
    const started = parseEvent(run.events[0]);
    if (started.type !== 'run_started') throw new Error('the log does not begin with run_started');
    return {
      events: run.events,
      state: read.state,
      side: await sideOf(run.events, read.state, resolve),
      input: await resolve(started.input),
      messages: await followUps(run.events, resolve),
    };
  } catch (error) {
    return { status: 'error', code: error instanceof MissingPayloadError ? 'payload_missing' : 'unreadable_run', message: errorMessage(error) };
  }
}

/** Bytes of a payload as the codec stored it, read back as JSON. */
export function decodeJson(bytes: Uint8Array): JsonValue {
  return JSON.parse(decoder.decode(bytes)) as JsonValue;
}
