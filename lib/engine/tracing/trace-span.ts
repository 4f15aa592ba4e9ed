import { createHash } from 'node:crypto';
import type { RunRef } from '../../core/run-ref.js';

/**
 * A finished span as Logbook derives it from a run's log: ids, times and attributes are all
 * decided here, so the same events always give the same span (the same ids included). The
 * tracer (otel-tracer.ts) hands it to OpenTelemetry; nothing in the engine sees an SDK type.
 */
export interface TraceSpan {
  traceId: string;
  spanId: string;
  /** Absent only for the run's root span (`invoke_agent`). */
  parentSpanId?: string;
  name: string;
  kind: 'internal' | 'client';
  /** Epoch ms. */
  start: number;
  end: number;
  attributes: Record<string, string | number | boolean | string[]>;
  /** Spans of other traces this one points at (a child run's root, a parent run's root). */
  links?: { traceId: string; spanId: string; attributes?: Record<string, string> }[];
  status?: { code: 'ok' | 'error'; message?: string };
  /** Moments inside the span (a step's phases: claimed, loaded, turns ended; an operation's retries). */
  events?: { name: string; at: number; attributes?: Record<string, string | number | boolean> }[];
}

/**
 * Attribute names of the OpenTelemetry GenAI semantic conventions Logbook writes (development
 * status; as of semantic conventions 1.45.0, the version of @opentelemetry/semantic-conventions
 * the tests compare these with). Logbook's own attributes are under `logbook.`.
 */
export const GEN_AI = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  finishReasons: 'gen_ai.response.finish_reasons',
  agentName: 'gen_ai.agent.name',
  agentId: 'gen_ai.agent.id',
  agentVersion: 'gen_ai.agent.version',
  conversationId: 'gen_ai.conversation.id',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  outputMessages: 'gen_ai.output.messages',
} as const;

/** 32 hex digits: every span of one run carries this trace id, whichever process emits it. */
export function traceIdOf(run: RunRef): string {
  return digest(['trace', run.tenant, run.runId]).slice(0, 32);
}

/** 16 hex digits, the same for the same run and parts: a span re-emitted after a crash keeps its id. */
export function spanIdOf(run: RunRef, ...parts: (string | number)[]): string {
  return digest(['span', run.tenant, run.runId, ...parts.map(String)]).slice(0, 16);
}

/** The id of the run's root span (`invoke_agent`), the parent of every step and of nothing else. */
export const rootSpanIdOf = (run: RunRef): string => spanIdOf(run, 'run');

/** The id of the span of the step that held lease epoch `epoch`. */
export const stepSpanIdOf = (run: RunRef, epoch: number): string => spanIdOf(run, 'step', epoch);

function digest(parts: string[]): string {
  // Length-prefixed, so ("a:b", "c") and ("a", "b:c") never collide.
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${part.length}:${part}|`);
  const hex = hash.digest('hex');
  // An all-zero id is invalid in OpenTelemetry; sha256 giving 16 zero digits is not a real case,
  // but the id must never be invalid, so flip the last digit.
  return /^0+$/.test(hex.slice(0, 16)) ? `${hex.slice(0, 15)}1${hex.slice(16)}` : hex;
}
