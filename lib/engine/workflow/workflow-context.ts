import { AsyncLocalStorage } from 'node:async_hooks';
import { SIGNAL_NAME, type OpKind } from '../../core/workflow-events.js';
import { PartialFailureError, WorkflowUsageError } from '../../core/workflow-errors.js';
import type { WorkflowContext, WorkflowDefinition } from '../../authoring/workflow-types.js';
import type { OpSpec } from './op-specs.js';
import { plural } from '../../core/plural.js';

/** Set while a step's function runs: an operation asked for inside it is a bug, refused at once. */
export const insideStep = new AsyncLocalStorage<string>();

/** What the context needs from the driver: a numbered, recorded operation. */
export interface OpRequester {
  request(kind: OpKind, name: string, spec: OpSpec): Promise<unknown>;
}

const MAX_NAME = 256;
const DEFAULT_MAP_CONCURRENCY = 10;

function usage(message: string): Promise<never> {
  return Promise.reject(new WorkflowUsageError(message));
}

/**
 * The `ctx` a workflow's run() gets. Each method checks its arguments (a bad one is a
 * WorkflowUsageError, not an operation), then asks the driver for the next operation. all() and
 * map() are built from operations: they add ordering, bounded concurrency and the rule that a
 * failure is thrown only once everything started has settled.
 */
export function workflowContext(driver: OpRequester, run: { tenant: string; runId: string; name: string; version: string }): WorkflowContext {
  const ask = (kind: OpKind, name: string, spec: OpSpec): Promise<unknown> => {
    const within = insideStep.getStore();
    if (within !== undefined)
      return usage(`ctx.${kind === 'child' ? 'agent/workflow' : kind}("${name}") inside step "${within}": operations cannot nest in a step`);
    if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME)
      return usage(`an operation name must be 1 to ${plural(MAX_NAME, 'character')}`);
    return driver.request(kind, name, spec);
  };
  const ctx: WorkflowContext = {
    tenant: run.tenant,
    runId: run.runId,
    definition: { name: run.name, version: run.version },
    step(name, fn, options = {}) {
      if (typeof fn !== 'function') return usage(`step "${name}": its second argument must be a function`);
      if (options.policy === 'verify' && typeof options.verify !== 'function') return usage(`step "${name}": policy verify needs a verify() function`);
      if (options.timeoutSeconds !== undefined && !(options.timeoutSeconds > 0)) return usage(`step "${name}": timeoutSeconds must be positive`);
      return ask('step', name, { kind: 'step', fn, options: options as never }) as never;
    },
    sleep(seconds) {
      if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) return usage('ctx.sleep(seconds) takes a non-negative number of seconds');
      return ask('sleep', 'sleep', { kind: 'sleep', until: { seconds } }) as Promise<void>;
    },
    sleepUntil(at) {
      const ms = at instanceof Date ? at.getTime() : at;
      if (typeof ms !== 'number' || !Number.isFinite(ms)) return usage('ctx.sleepUntil(at) takes a Date or epoch milliseconds');
      return ask('sleep', 'sleep', { kind: 'sleep', until: { at: ms } }) as Promise<void>;
    },
    waitForSignal(name, options) {
      if (!SIGNAL_NAME.test(name)) return usage(`signal name ${JSON.stringify(name)} must match ${SIGNAL_NAME}`);
      if (!options || typeof options.payload?.safeParse !== 'function') return usage(`waitForSignal("${name}") needs a payload schema`);
      if (!(options.timeoutSeconds > 0)) return usage(`waitForSignal("${name}") needs a positive timeoutSeconds`);
      return ask('signal', name, { kind: 'signal', signal: name, payload: options.payload, timeoutSeconds: options.timeoutSeconds }) as never;
    },
    approval(name, options) {
      if (!options || !('args' in options)) return usage(`approval("${name}") needs args: what the person decides about`);
      if (options.timeoutSeconds !== undefined && !(options.timeoutSeconds > 0)) return usage(`approval("${name}"): timeoutSeconds must be positive`);
      return ask('approval', name, {
        kind: 'approval',
        args: options.args,
        ...(options.schema ? { schema: options.schema } : {}),
        ...(options.timeoutSeconds !== undefined ? { timeoutSeconds: options.timeoutSeconds } : {}),
      }) as never;
    },
    agent(agent, input, options = {}) {
      if (!agent || typeof agent.name !== 'string' || !Array.isArray(agent.pinnedTools)) return usage('ctx.agent() takes an agent from defineAgent()');
      return ask('child', agent.name, { kind: 'child', definition: { kind: 'agent', agent }, input, options }) as never;
    },
    workflow(workflow, input, options = {}) {
      if (!isWorkflow(workflow)) return usage('ctx.workflow() takes a workflow from defineWorkflow()');
      return ask('child', workflow.name, { kind: 'child', definition: { kind: 'workflow', workflow }, input, options }) as never;
    },
    all(operations) {
      return settleAll([...operations]) as never;
    },
    map(items, fn, options = {}) {
      const limit = options.concurrency ?? DEFAULT_MAP_CONCURRENCY;
      if (!Number.isInteger(limit) || limit < 1) return usage('ctx.map: concurrency must be a positive integer');
      return mapLimited(items, fn, limit);
    },
    now() {
      return ask('now', 'now', { kind: 'now' }).then((ms) => new Date(ms as number));
    },
    random() {
      return ask('random', 'random', { kind: 'random' }) as Promise<number>;
    },
    uuid() {
      return ask('uuid', 'uuid', { kind: 'uuid' }) as Promise<string>;
    },
  };
  return ctx;
}

function isWorkflow(value: unknown): value is WorkflowDefinition {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'workflow';
}

/** Every promise's outcome, in order; resolves with the values, or rejects once all settled. */
async function settleAll<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  if (settled.every((s) => s.status === 'fulfilled')) return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
  throw new PartialFailureError(
    settled.map((s) => (s.status === 'fulfilled' ? { ok: true as const, value: s.value } : { ok: false as const, error: asError(s.reason) })),
  );
}

/**
 * At most `limit` items in flight; the next starts when one settles. Which item starts next
 * depends only on the order results come back in, which a replay reproduces (results are
 * delivered in the log's order), so a replayed map asks for the same operations in the same order.
 */
function mapLimited<I, O>(items: readonly I[], fn: (item: I, index: number) => Promise<O>, limit: number): Promise<O[]> {
  const results: Promise<O>[] = new Array(items.length);
  let next = 0;
  const startNext = (): Promise<void> | undefined => {
    if (next >= items.length) return undefined;
    const index = next++;
    const promise = Promise.resolve().then(() => fn(items[index]!, index));
    results[index] = promise;
    return promise.then(
      () => startNext(),
      () => startNext(),
    );
  };
  const lanes: Promise<void>[] = [];
  for (let i = 0; i < Math.min(limit, items.length); i++) lanes.push(startNext() ?? Promise.resolve());
  return Promise.all(lanes).then(() => settleAll(results));
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
