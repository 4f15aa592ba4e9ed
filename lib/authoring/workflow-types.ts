/**
 * What workflow authors write against (defineWorkflow), as types only. A workflow is code around
 * agents: an async function whose every `ctx` call is recorded in the run's log and returned from
 * the log when the function is replayed, so a run resumes after a crash, a deploy or a sleep of
 * days without repeating a side effect. How the engine replays it lives in lib/engine/workflow.
 */
import type { z } from 'zod';
import type { BudgetRequest } from '../core/budgets.js';
import type { PinnedSchedule, ScheduleSpec } from './schedule-types.js';
import type { Policy } from '../core/events.js';
import type { AgentDefinition, InputSchema, RunInput, ToolContext, TypedAnswer } from './types.js';

/**
 * What a step's function gets: the same as a tool's context. `callId` is the operation's id
 * (`op-<n>`), `idempotencyKey` is `<tenant>:<runId>:op-<n>` (the same on every attempt) and
 * `fencingToken` the worker's lease epoch: hand both to services that dedupe.
 */
export type StepContext = ToolContext;

/** How a step's failed attempts are retried: each failure and its next attempt's time are recorded. */
export interface StepRetry {
  /** Attempts in all, the first included. Default 3 for `rerun` and `idempotency_key` steps, 1 (no retry) for the others. */
  maxAttempts?: number;
  /** Seconds before the second attempt. Default 1. */
  initialIntervalSeconds?: number;
  /** Each interval is the previous times this. Default 2. */
  backoffCoefficient?: number;
  /** No interval is longer. Default 60. */
  maxIntervalSeconds?: number;
}

/** What verify() saw of a verify-policy step that started and has no result. */
export type StepVerifyOutcome<T> = { status: 'landed'; output: T } | { status: 'not_landed' } | { status: 'unknown' };

export interface StepOptions<T> {
  /**
   * What to do with a step that started and has no result (its worker died inside it): `rerun`
   * (a read: run it again; also the only policy that writes no started marker), `idempotency_key`
   * (again, with the same key), `verify` (look first: `verify` below), `escalate` (a person
   * decides; the default: the most conservative).
   */
  policy?: Policy;
  /** The step's deadline: its function is aborted after this. Default 60; at most the worker's limit. */
  timeoutSeconds?: number;
  retry?: StepRetry;
  /** Required for policy `verify`: did the side effect of this step land? */
  verify?(ctx: StepContext): Promise<StepVerifyOutcome<T>>;
}

/** What waitForSignal returns: the payload, or that its time ran out. */
export type SignalResult<T> = { timedOut: false; payload: T; sentBy: string } | { timedOut: true };

export interface WaitForSignalOptions<S extends z.ZodType> {
  /** The payload POST /runs/{id}/signals must send (its JSON Schema is pinned; the API checks it). */
  payload: S;
  /** Give up after this long: the result is `{ timedOut: true }`. */
  timeoutSeconds: number;
}

export interface ApprovalOptions<T> {
  /** What the person approves, rejects or edits (shown to them; the decision is bound to its hash). */
  args: T;
  /** An edit must fit this schema (and is checked by the API against its JSON Schema). Without it, edits are refused. */
  schema?: z.ZodType<T>;
  /** Unanswered after this long, the approval expires: `{ approved: false, reason: 'expired' }`. Default: the run's deadline. */
  timeoutSeconds?: number;
}

export type ApprovalOutcome<T> =
  | { approved: true; args: T; edited: boolean; by: string; comment?: string }
  | { approved: false; reason: 'rejected' | 'expired'; by?: string; comment?: string };

export interface ChildRunOptions {
  /** The child's budgets (its own defaults otherwise), each capped by what this run has left; reserved from this run. */
  budgets?: BudgetRequest;
}

export interface MapOptions {
  /** At most this many items in flight at once. Default 10. */
  concurrency?: number;
}

/** Each item of an all/map whose results came back mixed: in order, what succeeded and what failed. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: Error };

/**
 * What ctx.agent returns for an agent: its output schema's output type, or its answer text without
 * one (defineAgent records which); unknown for an agent whose definition does not say.
 */
export type AgentOutputOf<A> = A extends TypedAnswer<infer T> ? (unknown extends T ? unknown : T) : unknown;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AgentInputOf<A> = A extends AgentDefinition<infer S, any> ? (S extends z.ZodType ? z.input<S> : RunInput<S>) : unknown;

/**
 * The context a workflow's `run` gets. Every method is an operation of the run: recorded before
 * the code sees its result, returned from the log on replay. The code between operations must be
 * deterministic (branch on their results, not on the clock, randomness or I/O of its own: use
 * `ctx.now()`, `ctx.random()`, `ctx.uuid()` and `ctx.step`), and must only await these operations.
 */
export interface WorkflowContext {
  readonly tenant: string;
  readonly runId: string;
  /** The workflow and version this run pinned. */
  readonly definition: { readonly name: string; readonly version: string };
  /**
   * Run `fn` once and record its JSON result; a replay returns the recorded result without
   * running it. A failure (after its retries) throws StepFailedError here, which the code may catch.
   */
  step<T>(name: string, fn: (ctx: StepContext) => Promise<T> | T, options?: StepOptions<T>): Promise<T>;
  /** A durable sleep: no Lambda is held (short ones excepted); the run wakes when it is over. */
  sleep(seconds: number): Promise<void>;
  sleepUntil(at: Date | number): Promise<void>;
  /** Wait (durably) for POST /runs/{id}/signals with this name and a payload of this schema. */
  waitForSignal<S extends z.ZodType>(name: string, options: WaitForSignalOptions<S>): Promise<SignalResult<z.output<S>>>;
  /** Ask a person to approve, reject or edit `args` (POST /runs/{id}/approvals with callId `op-<n>`). */
  approval<T>(name: string, options: ApprovalOptions<T>): Promise<ApprovalOutcome<T>>;
  /** A child run of an agent, awaited without holding a Lambda: its output (or answer). Cancel cascades. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  agent<A extends AgentDefinition<any, any>>(agent: A, input: AgentInputOf<A>, options?: ChildRunOptions): Promise<AgentOutputOf<A>>;
  /** A child run of a workflow, awaited without holding a Lambda: its output. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  workflow<W extends WorkflowDefinition<any, any>>(workflow: W, input: WorkflowInputOf<W>, options?: ChildRunOptions): Promise<WorkflowOutputOf<W>>;
  /** Await operations started together: their results in order; if any fails, once all have settled, PartialFailureError. */
  all<T extends readonly unknown[]>(operations: readonly [...{ [K in keyof T]: Promise<T[K]> }]): Promise<T>;
  /** `fn` over every item, at most `concurrency` at a time: results in order; failures as in `all`. */
  map<I, O>(items: readonly I[], fn: (item: I, index: number) => Promise<O>, options?: MapOptions): Promise<O[]>;
  /** The time, recorded: a replay sees the same. */
  now(): Promise<Date>;
  /** A random number in [0, 1), recorded. */
  random(): Promise<number>;
  /** A random UUID, recorded. */
  uuid(): Promise<string>;
}

/** The value a workflow returns: its output schema's input, or any JSON (or nothing) without one. */
export type WorkflowReturn<O> = O extends z.ZodType ? z.input<O> : unknown;

export interface WorkflowSpec<S extends InputSchema | undefined = undefined, O extends z.ZodType | undefined = undefined> {
  name: string;
  version: string;
  description?: string;
  /** The input a run takes, validated at every start (POST /runs, EventBridge, a parent run, a schedule): 400 with paths. */
  input?: S;
  /** The output `run` must return (checked when it returns; the run's `output`). */
  output?: O;
  /** `maxSteps` counts operations (default 10,000, up to 1,000,000); tokens and cost are spent by child agents. */
  budgets?: BudgetRequest;
  /** Start a run on a cron (docs/guides/workflows.md#schedules); checked here, input included. */
  schedule?: ScheduleSpec;
  /** Wait past a started step's deadline before applying its policy. Default 30 s. */
  graceMs?: number;
  run(ctx: WorkflowContext, input: RunInput<S>): Promise<WorkflowReturn<O>>;
}

export interface WorkflowDefinition<
  S extends InputSchema | undefined = InputSchema | undefined,
  O extends z.ZodType | undefined = z.ZodType | undefined,
> extends WorkflowSpec<S, O> {
  readonly kind: 'workflow';
  /** The input's JSON Schema and hash, pinned in run_started. */
  inputSchema?: { jsonSchema: Record<string, unknown>; sha256: string };
  /** The output's JSON Schema and hash, pinned in run_started. */
  pinnedOutput?: { schema: Record<string, unknown>; schemaHash: string };
  /** The schedule as checked (cron parsed, time zone known, input fits). */
  pinnedSchedule?: PinnedSchedule;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type WorkflowInputOf<W> = W extends WorkflowDefinition<infer S, any> ? (S extends z.ZodType ? z.input<S> : RunInput<S>) : unknown;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type WorkflowOutputOf<W> = W extends WorkflowDefinition<any, infer O> ? (O extends z.ZodType ? z.output<O> : unknown) : unknown;
