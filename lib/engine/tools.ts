import { z } from 'zod';
import type { Policy } from '../core/events.js';
import type { JsonValue } from '../core/json.js';
import { ConfigError } from '../core/errors.js';

/** What a tool gets besides its arguments. */
export interface ToolContext {
  tenant: string;
  runId: string;
  /** `<seq of the model_response>-<index>`: stable across resumes. */
  callId: string;
  attempt: number;
  /** `<tenant>:<runId>:<callId>`: hand it to services that dedupe. Same on every attempt. */
  idempotencyKey: string;
  /**
   * The lease epoch of the worker running the call: it only grows, and a worker that took the run
   * over has a higher one. Pass it downstream with the idempotency key; a careful service keeps
   * the highest token seen per key and refuses lower ones, so a stale worker's late request fails.
   */
  fencingToken: number;
  /**
   * Epoch ms after which this call is over (its `notAfter`; for verify(), verify's own timeout).
   * After it, plus the agent's grace, another worker may apply the policy. A downstream that
   * honours request deadlines should refuse the request once this has passed.
   */
  notAfter: number;
  /** Aborted on timeout, on cancel (rerun and idempotency_key tools) and when the lease is lost. */
  signal: AbortSignal;
  /**
   * True while this worker still holds the run by the wall clock: its lease is not lost, its last
   * renewal is younger than the lease minus the margin, and `notAfter` has not passed. No I/O.
   * A process that was frozen (SIGSTOP, a long GC pause, a starved host) sees false when it wakes.
   */
  leaseFresh(): boolean;
  /**
   * Throws StaleLeaseError (code `lease_stale`) unless leaseFresh(). Call it right before the
   * irreversible moment: the call then did nothing and is left to its policy, never recorded as
   * a failure by this worker.
   */
  assertLeaseFresh(): void;
}

export type VerifyOutcome = { status: 'landed'; output: JsonValue } | { status: 'not_landed' } | { status: 'unknown' };

export interface ToolSpec<I> {
  name: string;
  version: string;
  description: string;
  input: z.ZodType<I>;
  /** What to do with a call that started and has no result. Default: escalate to a person. */
  policy?: Policy;
  /** Default 60 s; at most MAX_TOOL_TIMEOUT_MS. */
  timeoutMs?: number;
  execute(args: I, ctx: ToolContext): Promise<JsonValue>;
  /** Required for policy `verify`: look whether the side effect of this call landed. */
  verify?(args: I, ctx: ToolContext): Promise<VerifyOutcome>;
}

export interface ToolDefinition<I = unknown> extends Required<Omit<ToolSpec<I>, 'verify'>> {
  verify?: ToolSpec<I>['verify'];
  /** JSON Schema of the input, as pinned in run_started and sent to the model. */
  inputSchema: Record<string, unknown>;
}

export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;
/** The worker's Lambda timeout (300 s) minus room to record the result and release. */
export const MAX_TOOL_TIMEOUT_MS = 240_000;
const NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

export function defineTool<I>(spec: ToolSpec<I>): ToolDefinition<I> {
  if (!NAME.test(spec.name)) throw new ConfigError(`tool name "${spec.name}" must match ${NAME}`);
  const policy = spec.policy ?? 'escalate';
  if (policy === 'verify' && !spec.verify) throw new ConfigError(`tool ${spec.name} has policy verify but no verify()`);
  const timeoutMs = spec.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  if (timeoutMs <= 0 || timeoutMs > MAX_TOOL_TIMEOUT_MS) {
    throw new ConfigError(`tool ${spec.name}: timeoutMs must be in (0, ${MAX_TOOL_TIMEOUT_MS}]`);
  }
  const inputSchema = z.toJSONSchema(spec.input, { target: 'draft-2020-12' }) as Record<string, unknown>;
  delete inputSchema.$schema;
  return { ...spec, policy, timeoutMs, inputSchema, verify: spec.verify };
}
