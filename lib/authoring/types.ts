/**
 * What agent authors write against, as types only: a tool's context and definition, an agent's
 * spec and definition, and what an agents module passes to defineAgents(). The functions that build them live
 * beside this file; how the engine runs them lives in lib/engine and is not imported here.
 */
import type { z } from 'zod';
import type { BudgetRequest } from '../core/budgets.js';
import type { PinnedOutput, PinnedTool, Policy, Price } from '../core/events.js';
import type { JsonValue } from '../core/json.js';
import type { RedactionOptions } from '../core/redaction.js';
import type { ModelClient } from '../ports/model-client.js';
import type { ContextSpec } from './context-spec.js';

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

/** A tool that waits for the outside world instead of running code (waits.ts, agent-tool.ts). */
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
  /** Default DEFAULT_TOOL_TIMEOUT_MS; at most MAX_TOOL_TIMEOUT_MS (engine/limits.ts). */
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

/**
 * Structured output: the answer must be JSON that fits `schema` (the model is asked for it with
 * the provider's JSON-schema response format). An answer that does not fit is fed back to the
 * model as an error, at most `maxRepairs` times in a row (default 2, at most 10); then the run
 * fails with `output_invalid`. The parsed value is the run's `output`.
 */
export interface OutputSpec<O = unknown> {
  schema: z.ZodType<O>;
  maxRepairs?: number;
}

export interface AgentSpec {
  name: string;
  version: string;
  model: { id: string; maxOutputTokens: number; price?: Price };
  system: { version: string; text: string };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  tools: ToolDefinition<any>[];
  budgets?: BudgetRequest;
  /** Wait past a started call's notAfter before applying its policy. Default 30 s. */
  graceMs?: number;
  /** Structured output: a zod schema the answer must fit (JSON), or the schema with its repairs. */
  output?: z.ZodType | OutputSpec;
  /**
   * What a long run's prompt keeps (context-spec.ts): the last turns verbatim, older tool results
   * shortened or dropped, optionally a running summary. Pinned in run_started. Default: everything.
   */
  context?: ContextSpec;
}

export interface AgentDefinition extends AgentSpec {
  pinnedTools: PinnedTool[];
  promptSha256: string;
  /** The output schema as pinned in run_started (JSON Schema, hash, repairs), with the zod schema that checks answers. */
  pinnedOutput?: PinnedOutput;
  outputSchema?: z.ZodType;
}

/** What an agents module passes to defineAgents(). */
export interface AgentsSpec {
  /** Every agent (and every version still serving pinned runs) this deployment runs. */
  agents: readonly AgentDefinition[];
  /**
   * Model clients the application builds itself, by the model id its agents pin: scripted models
   * for tests and `logbook dev`, or a custom provider. Built once per process, on first use. Ids
   * not listed here are served by the built-in providers (`bedrock:<id>`, `openai:<model>`).
   */
  models?: Record<string, () => ModelClient>;
  /**
   * Secrets of this application beyond the built-in ones (patterns, key names) and fields never
   * to redact. Here, with the agents, so the API, the trigger and the worker redact alike.
   */
  redaction?: RedactionOptions;
}
