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
  /** The lease epoch of the worker running the call; a downstream may reject lower tokens. */
  fencingToken: number;
  /** Aborted on timeout, on cancel (rerun and idempotency_key tools) and when the lease is lost. */
  signal: AbortSignal;
}

export type VerifyOutcome = { status: 'landed'; output: JsonValue } | { status: 'not_landed' } | { status: 'unknown' };

/** What an approval predicate knows about the call besides its arguments. */
export interface ApprovalContext {
  tenant: string;
  runId: string;
  callId: string;
}

/** `always`, or a predicate of the call's arguments: true means a person must approve it first. */
// Method syntax keeps the predicate bivariant, like execute(), so a ToolDefinition<I> is a ToolDefinition<unknown>.
export type ApprovalRule<I> = 'always' | { predicate(args: I, ctx: ApprovalContext): boolean | Promise<boolean> }['predicate'];

/** A tool that waits for the outside world instead of running code (see waits.ts). */
export type ToolWait =
  | { kind: 'signal'; signal: string; payload: z.ZodType; timeoutMs: number }
  | { kind: 'timer'; maxMs: number; durationMs(args: unknown): number };

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
  /**
   * A person approves each call before it runs (`always`), or each call this predicate returns
   * true for. The approval is bound to the exact arguments and re-checked right before the call.
   */
  approval?: ApprovalRule<I>;
  /** An approval not given within this time rejects the call. Default (and at most): until the run's deadline. */
  approvalTimeoutSeconds?: number;
}

export interface ToolDefinition<I = unknown> extends Required<Omit<ToolSpec<I>, 'verify' | 'approval' | 'approvalTimeoutSeconds'>> {
  verify?: ToolSpec<I>['verify'];
  approval?: ApprovalRule<I>;
  approvalTimeoutSeconds?: number;
  /** Set by waitForSignal() and sleepTool(): the call completes from outside, holding no Lambda. */
  wait?: ToolWait;
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
  const t = spec.approvalTimeoutSeconds;
  if (t !== undefined && (!Number.isInteger(t) || t <= 0)) throw new ConfigError(`tool ${spec.name}: approvalTimeoutSeconds must be a positive integer`);
  if (t !== undefined && spec.approval === undefined) throw new ConfigError(`tool ${spec.name}: approvalTimeoutSeconds without approval`);
  const inputSchema = z.toJSONSchema(spec.input, { target: 'draft-2020-12' }) as Record<string, unknown>;
  delete inputSchema.$schema;
  return { ...spec, policy, timeoutMs, inputSchema, verify: spec.verify };
}
