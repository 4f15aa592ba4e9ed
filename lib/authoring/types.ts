/**
 * What agent authors write against, as types only: a tool's context and definition, an agent's
 * spec and definition, and what an agents module passes to defineAgents(). The functions that build them live
 * beside this file; how the engine runs them lives in lib/engine and is not imported here.
 */
import type { z } from 'zod';
import type { BudgetRequest } from '../core/budgets.js';
import type { PinnedOutput, PinnedTool, Policy, Price } from '../core/events.js';
import type { JsonValue } from '../core/json.js';
import type { ModelSettings } from '../core/model-settings.js';
import type { PinnedSchedule, ScheduleSpec } from './schedule-types.js';

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

/**
 * What verify() saw. `landed`'s output becomes the call's result in place of execute()'s: like
 * that, any JSON-compatible value (an `interface` type included, see JsonCompatible).
 */
// `output?: undefined` on the others: a verify() returning either outcome infers O from `landed` alone.
export type VerifyOutcome<O = JsonValue> =
  { status: 'landed'; output: O } | { status: 'not_landed'; output?: undefined } | { status: 'unknown'; output?: undefined };

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
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  | { kind: 'child'; agent: AgentDefinition<any, any>; budgets: BudgetRequest };

/**
 * A value JSON keeps as it is: plain data, including objects of an `interface` type (which
 * JsonValue refuses, having no index signature), but no functions, Dates, Maps or class
 * instances with methods, which JSON.stringify would change or drop.
 */
export type JsonCompatible<T> = T extends string | number | boolean | null | undefined
  ? T
  : T extends (...args: never[]) => unknown
    ? never
    : T extends readonly (infer U)[]
      ? readonly JsonCompatible<U>[]
      : T extends object
        ? { [K in keyof T]: JsonCompatible<T[K]> }
        : never;

/** `O`: what execute() returns; `V`: what verify() reports as landed (both JSON-compatible). */
export interface ToolSpec<I, O = JsonValue, V = JsonValue> {
  name: string;
  version: string;
  description: string;
  input: z.ZodType<I> | JsonSchemaInput<I>;
  /** What to do with a call that started and has no result. Default: escalate to a person. */
  policy?: Policy;
  /** Default DEFAULT_TOOL_TIMEOUT_MS; at most MAX_TOOL_TIMEOUT_MS (core/limits.ts). */
  timeoutMs?: number;
  /** Returns the result the model reads: any JSON-compatible value (see JsonCompatible). */
  execute(args: I, ctx: ToolContext): Promise<O>;
  /** Required for policy `verify`: look whether the side effect of this call landed. */
  verify?(args: I, ctx: ToolContext): Promise<VerifyOutcome<V>>;
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

/** What an instructions function knows about the run it builds the system prompt for. */
export interface InstructionsContext<C = unknown> {
  tenant: string;
  runId: string;
  agent: { name: string; version: string };
  /** Set for a child run (agentTool): the parent run and its call. */
  parent?: { runId: string; callId: string };
  /** What defineAgents' `appContext` loader returned for this run (undefined without one). */
  app: C;
}

/**
 * The system prompt as a function of the run's typed input and context, sync or async. Called
 * once, when the run starts (before anything is written); its text is pinned in run_started and a
 * resume, fork or replay never calls it again. A throw refuses the start (InstructionsError).
 */
// Method syntax keeps the parameter bivariant, so an agent with a typed input is still an AgentDefinition.
export type InstructionsFunction<I, C = unknown> = { build(input: I, ctx: InstructionsContext<C>): string | Promise<string> }['build'];

/** An agent's input schema: zod, whose JSON Schema is pinned and published per agent. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type InputSchema = z.ZodType<any>;

/** The run input an agent's functions see: the schema's output, or any JSON without a schema. */
export type RunInput<S extends InputSchema | undefined> = S extends z.ZodType<infer O> ? O : JsonValue;

/**
 * An agent's context policy as written (AgentSpec.context): what a long run's prompt keeps. See
 * core/context-policy.ts for what each field does to the prompt; docs/guides/context.md.
 */
export interface ContextSpec {
  /** Turns (a model response and its calls' results) sent verbatim at the end of the prompt. At least 1. */
  keepTurns: number;
  /** What older turns keep: their calls with each result's stored summary, a one-line reference, or nothing. */
  olderToolResults: 'summary' | 'reference' | 'drop';
  /**
   * Fold older turns into a running summary by a model call (recorded, budgeted, a step), every
   * `everyTurns` older turns. The summary replaces the turns it covers in the prompt.
   */
  summarize?: {
    /** Default: the agent's model. Another model needs its `price`. */
    model?: string;
    /** Default: the agent's model price. */
    price?: Price;
    maxOutputTokens: number;
    everyTurns: number;
  };
}

export interface AgentSpec<S extends InputSchema | undefined = undefined, C = unknown> {
  name: string;
  version: string;
  /**
   * The model and how to sample it. `settings` are pinned; one the model has no switch for is
   * refused here (ConfigError), see lib/models/model-capabilities.ts.
   */
  model: { id: string; maxOutputTokens: number; price?: Price; settings?: ModelSettings };
  /**
   * The input a run takes. POST /runs, the EventBridge trigger, child runs, forks with a new input
   * and follow-up messages are validated against it (400 with the paths of what is wrong, nothing
   * written). Without it, a run takes any non-empty text, object or array.
   */
  input?: S;
  /** Fixed text, or a function of the run's input and context resolved once when a run starts. */
  system: { version: string; text: string | InstructionsFunction<RunInput<S>, C> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  tools: ToolDefinition<any>[];
  budgets?: BudgetRequest;
  /** Start a run on a cron (docs/guides/workflows.md#schedules); checked here, input included. */
  schedule?: ScheduleSpec;
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

export interface AgentDefinition<S extends InputSchema | undefined = InputSchema | undefined, C = unknown> extends AgentSpec<S, C> {
  pinnedTools: PinnedTool[];
  /** sha256 of the fixed system text; for an instructions function, of its version (the text is hashed per run). */
  promptSha256: string;
  /** The output schema as pinned in run_started (JSON Schema, hash, repairs), with the zod schema that checks answers. */
  pinnedOutput?: PinnedOutput;
  outputSchema?: z.ZodType;
  /** The input's JSON Schema (draft 2020-12, as the API publishes it) and its hash, pinned in run_started. */
  inputSchema?: { jsonSchema: Record<string, unknown>; sha256: string };
  /** The schedule as checked (cron parsed, time zone known, input fits). */
  pinnedSchedule?: PinnedSchedule;
}

/**
 * The type of what a run of an agent answers, carried by the agent's definition for ctx.agent (a
 * type only: no value has it). An agent with an output schema answers its output; one without, its text.
 */
export declare const agentAnswer: unique symbol;
export interface TypedAnswer<T> {
  readonly [agentAnswer]?: T;
}

/** What defineAgents' `appContext` loader is told about the run whose instructions it serves. */
export interface AppContextRequest {
  tenant: string;
  runId: string;
  agent: { name: string; version: string };
}

/** Loads what instructions functions need (a database handle, the tenant's policy), once per run start. */
export type AppContextLoader<C = unknown> = (request: AppContextRequest) => C | Promise<C>;
