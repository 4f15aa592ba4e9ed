import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import type { PinnedWait } from '../core/events.js';
import { defineTool } from './define-tool.js';
import type { ToolDefinition, ToolWait } from './types.js';

/**
 * Durable waits: tools that wait for the outside world without holding a Lambda. The engine
 * records `tool_started` with `wait: {kind, until}` and the run waits (status `waiting`, head
 * `wakeAt` = until). A signal (POST /runs/{id}/signals) reaches the call through the inbox as a
 * `complete_call` item; the sweeper wakes the run at `until` for the timeout or the timer. The same
 * shape (a started call completed later by an inbox item or a timer) carries child runs
 * (agent-tool.ts). How the engine starts and completes a wait is in engine/waits.ts.
 */

export interface WaitForSignalSpec<P, I> {
  /** The tool's name, as the model calls it. */
  name: string;
  version?: string;
  description: string;
  /** The signal name POST /runs/{id}/signals must give. */
  signal: string;
  /** The payload schema: a signal whose payload does not fit is refused (400 with paths). */
  payload: z.ZodType<P>;
  /** Give up after this long: the call completes with a timeout error the model sees. */
  timeoutSeconds: number;
  /** What the model passes when it starts waiting (default: nothing). */
  input?: z.ZodType<I>;
}

const MAX_WAIT_SECONDS = 366 * 86_400;

function positiveSeconds(name: string, field: string, value: number): void {
  if (!Number.isInteger(value) || value <= 0 || value > MAX_WAIT_SECONDS) {
    throw new ConfigError(`tool ${name}: ${field} must be a whole number of seconds in (0, ${MAX_WAIT_SECONDS}]`);
  }
}

function neverRuns(name: string) {
  return async (): Promise<never> => {
    throw new ConfigError(`tool ${name} waits for the outside world; the engine never runs it`);
  };
}

/** A tool whose call completes when a signal with a valid payload arrives, or times out. */
export function waitForSignal<P, I = Record<string, never>>(spec: WaitForSignalSpec<P, I>): ToolDefinition<I> {
  positiveSeconds(spec.name, 'timeoutSeconds', spec.timeoutSeconds);
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(spec.signal)) throw new ConfigError(`tool ${spec.name}: signal name must match [A-Za-z0-9_.:-]{1,64}`);
  const tool = defineTool<I>({
    name: spec.name,
    version: spec.version ?? '1',
    description: spec.description,
    input: spec.input ?? (z.object({}).strict() as unknown as z.ZodType<I>),
    policy: 'rerun',
    execute: neverRuns(spec.name),
  });
  return { ...tool, wait: { kind: 'signal', signal: spec.signal, payload: spec.payload, timeoutMs: spec.timeoutSeconds * 1000 } };
}

export interface SleepToolSpec {
  /** The longest sleep the model may ask for; a longer one is refused as invalid arguments. */
  maxSeconds: number;
  name?: string;
  version?: string;
  description?: string;
}

/** A `sleep` tool the model may call: the run resumes after the time, with no compute meanwhile. */
export function sleepTool(spec: SleepToolSpec): ToolDefinition<{ seconds: number }> {
  const name = spec.name ?? 'sleep';
  positiveSeconds(name, 'maxSeconds', spec.maxSeconds);
  const tool = defineTool({
    name,
    version: spec.version ?? '1',
    description: spec.description ?? `Pause for a number of seconds (at most ${spec.maxSeconds}) before continuing.`,
    input: z.object({ seconds: z.number().int().min(1).max(spec.maxSeconds) }).strict(),
    policy: 'rerun',
    execute: neverRuns(name),
  });
  const maxMs = spec.maxSeconds * 1000;
  return { ...tool, wait: { kind: 'timer', maxMs, durationMs: (args) => Math.min(maxMs, (args as { seconds: number }).seconds * 1000) } };
}

/** What run_started pins of a waiting tool (and what its schema hash covers). */
export function pinnedWait(wait: ToolWait | undefined): PinnedWait | undefined {
  if (!wait) return undefined;
  if (wait.kind === 'timer') return { kind: 'timer', maxMs: wait.maxMs };
  if (wait.kind === 'child') return { kind: 'child', agent: { name: wait.agent.name, version: wait.agent.version }, budgets: { ...wait.budgets } };
  const payloadSchema = z.toJSONSchema(wait.payload, { target: 'draft-2020-12' }) as Record<string, unknown>;
  delete payloadSchema.$schema;
  return { kind: 'signal', signal: wait.signal, payloadSchema, timeoutMs: wait.timeoutMs };
}
