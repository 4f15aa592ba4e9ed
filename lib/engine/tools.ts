import { z } from 'zod';
import type { Policy } from '../core/events.js';
import type { JsonValue } from '../core/json.js';
import { ConfigError } from '../core/errors.js';
import type { BudgetRequest } from '../core/budgets.js';
import type { AgentDefinition } from './agents.js';
import { DEFAULT_TOOL_TIMEOUT_MS, MAX_TOOL_TIMEOUT_MS } from './limits.js';

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

/**
 * Arguments described by a JSON Schema rather than zod (tools listed from an MCP server): the
 * schema is pinned and sent to the model as given, and `validate` checks the model's arguments.
 */
export interface JsonSchemaInput<I = unknown> {
  jsonSchema: Record<string, unknown>;
  validate(args: unknown): { ok: true; value: I } | { ok: false; issues: readonly { path: readonly (string | number)[]; message: string }[] };
}

/** What an approval predicate knows about the call besides its arguments. */
export interface ApprovalContext {
  tenant: string;
  runId: string;
  callId: string;
}

/** `always`, or a predicate of the call's arguments: true means a person must approve it first. */
// Method syntax keeps the predicate bivariant, like execute(), so a ToolDefinition<I> is a ToolDefinition<unknown>.
export type ApprovalRule<I> = 'always' | { predicate(args: I, ctx: ApprovalContext): boolean | Promise<boolean> }['predicate'];

/** A tool that waits for the outside world instead of running code (see waits.ts, agent-tool.ts). */
export type ToolWait =
  | { kind: 'signal'; signal: string; payload: z.ZodType; timeoutMs: number }
  | { kind: 'timer'; maxMs: number; durationMs(args: unknown): number }
  | { kind: 'child'; agent: AgentDefinition; budgets: BudgetRequest };

export interface ToolSpec<I> {
  name: string;
  version: string;
  description: string;
  input: z.ZodType<I> | JsonSchemaInput<I>;
  /** What to do with a call that started and has no result. Default: escalate to a person. */
  policy?: Policy;
  /** Default DEFAULT_TOOL_TIMEOUT_MS; at most MAX_TOOL_TIMEOUT_MS (limits.ts). */
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

export interface ToolDefinition<I = unknown> extends Required<Omit<ToolSpec<I>, 'verify' | 'input' | 'approval' | 'approvalTimeoutSeconds'>> {
  /** Always a zod schema: a JSON Schema input is wrapped so the engine validates both alike. */
  input: z.ZodType<I>;
  verify?: ToolSpec<I>['verify'];
  approval?: ApprovalRule<I>;
  approvalTimeoutSeconds?: number;
  /** Set by waitForSignal() and sleepTool(): the call completes from outside, holding no Lambda. */
  wait?: ToolWait;
  /** JSON Schema of the input, as pinned in run_started and sent to the model. */
  inputSchema: Record<string, unknown>;
}

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
  const { input, inputSchema } = isJsonSchemaInput(spec.input) ? fromJsonSchema(spec.input) : fromZod(spec.input);
  return { ...spec, input, policy, timeoutMs, inputSchema, verify: spec.verify };
}

function isJsonSchemaInput<I>(input: z.ZodType<I> | JsonSchemaInput<I>): input is JsonSchemaInput<I> {
  // Duck-typed, not instanceof: an application may bring its own copy of zod.
  return typeof (input as { safeParse?: unknown }).safeParse !== 'function' && typeof (input as JsonSchemaInput<I>).validate === 'function';
}

function fromZod<I>(input: z.ZodType<I>): { input: z.ZodType<I>; inputSchema: Record<string, unknown> } {
  const inputSchema = z.toJSONSchema(input, { target: 'draft-2020-12' }) as Record<string, unknown>;
  delete inputSchema.$schema;
  return { input, inputSchema };
}

/** The dialect marker is dropped as for zod tools: providers reject it, and the validator already knows it. */
function fromJsonSchema<I>(spec: JsonSchemaInput<I>): { input: z.ZodType<I>; inputSchema: Record<string, unknown> } {
  const inputSchema = structuredClone(spec.jsonSchema);
  delete inputSchema.$schema;
  const input = z.custom<I>().superRefine((value, ctx) => {
    const result = spec.validate(value);
    if (!result.ok) for (const issue of result.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: [...issue.path] });
  });
  return { input, inputSchema };
}
