import type { AgentRegistry } from '../authoring/registry.js';
import type { ToolContext, ToolDefinition } from '../authoring/types.js';

/**
 * One invocation of a tool's execute() or verify() in a harness point, by any of its worker
 * processes, with what the engine handed it and the side effects the scenario's services
 * recorded while it ran.
 */
export interface TrackedCall {
  kind: 'execute' | 'verify';
  callId: string;
  tool: string;
  attempt: number;
  /** ctx.fencingToken: the lease epoch of the worker that ran it. */
  token: number;
  notAfter: number;
  /** ctx.idempotencyKey. */
  key: string;
  worker: string;
  /** `paused`: frozen inside the call by the harness (not counted as running meanwhile). */
  state: 'running' | 'paused' | 'done';
  /** Effects recorded while it ran (attributed as described at attribute()). */
  effects: unknown[];
  /** Settles when the tool's own function does. */
  settled: Promise<void>;
}

/** What a harness point may do at the start of a tracked call, before the tool's own code runs. */
export interface CallHooks {
  beforeExecute?(call: TrackedCall): Promise<void> | void;
}

/** The fields of a side effect the call checks read (SideEffectRecord, and `service` when present). */
interface EffectFields {
  key?: unknown;
  op?: unknown;
  service?: unknown;
  readOnly?: unknown;
  applied?: unknown;
}

export function effectKey(effect: unknown): string | undefined {
  const key = (effect as EffectFields | null)?.key;
  return typeof key === 'string' ? key : undefined;
}

/** Where an effect landed, in words for a failure: `payments (refund)`, or `the service (charge)`. */
export function effectTarget(effect: unknown): string {
  const e = (effect as EffectFields | null) ?? {};
  const op = typeof e.op === 'string' ? e.op : 'effect';
  return `${typeof e.service === 'string' ? e.service : 'the service'} (${op})`;
}

/** The operation an effect was: `refund` or `payments refund`. */
function effectOp(effect: unknown): string {
  const e = (effect as EffectFields | null) ?? {};
  const op = typeof e.op === 'string' ? e.op : 'effect';
  return typeof e.service === 'string' ? `${e.service} ${op}` : op;
}

function isWrite(effect: unknown): boolean {
  return (effect as EffectFields | null)?.readOnly !== true;
}

/** Whether `key` names the call whose idempotency key is `base` (itself, or a key built from it). */
function keyNames(key: string, base: string): boolean {
  const at = key.indexOf(base);
  return at >= 0 && !/\d/.test(key.charAt(at + base.length));
}

/**
 * Every tool call of one harness point, across its worker processes, and the effects each one
 * caused. Workers get their registry through registry(), which wraps each tool's execute() and
 * verify(); the effects are read from the scenario (sideEffects) at every call's start and end.
 */
export class CallTracker {
  readonly calls: TrackedCall[] = [];
  private seen = 0;

  constructor(private readonly effectsOf: () => readonly unknown[]) {}

  /** The registry a worker process uses: the same agents, their tools tracked (and hooked). */
  registry(base: AgentRegistry, worker: string, hooks: CallHooks = {}): AgentRegistry {
    const wrapped = new WeakMap<ToolDefinition, ToolDefinition>();
    const wrap = (impl: ToolDefinition): ToolDefinition => {
      let out = wrapped.get(impl);
      if (!out) wrapped.set(impl, (out = this.trackedTool(impl, worker, hooks)));
      return out;
    };
    return new Proxy(base, {
      get(target, prop) {
        if (prop === 'tool') {
          return (name: string, schemaHash: string, agent: string) => {
            const impl = target.tool(name, schemaHash, agent);
            return impl ? wrap(impl) : impl;
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** A paused call's effects are not its own until it runs again (others run meanwhile). */
  pause(call: TrackedCall): void {
    this.attribute();
    call.state = 'paused';
  }

  resume(call: TrackedCall): void {
    this.attribute();
    call.state = 'running';
  }

  /**
   * Hand the effects recorded since the last look to the calls running now: all of them to the
   * one call running alone; with several running, each to the one whose idempotency key its key
   * names (a key built from it counts), none when no single call is named. Effects recorded
   * while no call runs (a person's lookup) belong to none.
   */
  attribute(): void {
    const effects = this.effectsOf();
    if (effects.length < this.seen) this.seen = 0;
    const running = this.calls.filter((c) => c.state === 'running');
    for (const effect of effects.slice(this.seen)) {
      const key = effectKey(effect);
      const owner = running.length === 1 ? running[0] : key === undefined ? undefined : only(running.filter((c) => keyNames(key, c.key)));
      owner?.effects.push(effect);
    }
    this.seen = effects.length;
  }

  private trackedTool(impl: ToolDefinition, worker: string, hooks: CallHooks): ToolDefinition {
    const track = <R>(kind: TrackedCall['kind'], ctx: ToolContext, run: () => Promise<R>, hook?: (call: TrackedCall) => Promise<void> | void): Promise<R> => {
      this.attribute();
      let settle!: () => void;
      const call: TrackedCall = {
        kind,
        callId: ctx.callId,
        tool: impl.name,
        attempt: ctx.attempt,
        token: ctx.fencingToken,
        notAfter: ctx.notAfter,
        key: ctx.idempotencyKey,
        worker,
        state: 'running',
        effects: [],
        settled: new Promise<void>((r) => (settle = r)),
      };
      this.calls.push(call);
      const body = async () => {
        try {
          if (hook) {
            // Held in its hook, the call has not begun: what others cause meanwhile is not its.
            call.state = 'paused';
            await hook(call);
            this.attribute();
            call.state = 'running';
          }
          return await run();
        } finally {
          this.attribute();
          call.state = 'done';
          settle();
        }
      };
      return body();
    };
    const execute: ToolDefinition['execute'] = (args, ctx) => track('execute', ctx, () => Promise.resolve(impl.execute(args, ctx)), hooks.beforeExecute);
    const verify = impl.verify;
    return new Proxy(impl, {
      get(target, prop, receiver) {
        if (prop === 'execute') return execute;
        if (prop === 'verify' && verify) return (args: unknown, ctx: ToolContext) => track('verify', ctx, () => Promise.resolve(verify(args, ctx)));
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
  }
}

function only<T>(items: T[]): T | undefined {
  return items.length === 1 ? items[0] : undefined;
}

/**
 * A call whose attempts reached the same service operation with different keys: the service
 * cannot tell the retry from a new request, so it applies both (a dropped key, a key built per
 * attempt or at random). Reported as such, not only as the duplicate or differing answer it causes.
 * Per (call, operation): more distinct keys across attempts than any one attempt sent.
 */
export function changingKeyFailures(calls: readonly TrackedCall[]): string[] {
  const failures: string[] = [];
  const byCall = new Map<string, TrackedCall[]>();
  for (const c of calls) if (c.kind === 'execute') byCall.set(c.callId, [...(byCall.get(c.callId) ?? []), c]);
  for (const [callId, attempts] of byCall) {
    const ops = new Map<string, { key: string; call: TrackedCall }[]>();
    for (const call of attempts) {
      for (const e of call.effects) {
        const key = effectKey(e);
        if (key === undefined || !isWrite(e)) continue;
        const list = ops.get(effectOp(e)) ?? [];
        if (!list.some((x) => x.key === key && x.call === call)) list.push({ key, call });
        ops.set(effectOp(e), list);
      }
    }
    for (const [op, sent] of ops) {
      const keys = [...new Set(sent.map((s) => s.key))];
      const perAttempt = Math.max(...attempts.map((a) => sent.filter((s) => s.call === a).length));
      if (keys.length <= perAttempt) continue;
      const base = attempts[0]?.key ?? '';
      const what = sent.map((s) => `"${s.key}" (attempt ${s.call.attempt}, token ${s.call.token})`).join(', ');
      const dropped = keys.every((k) => !keyNames(k, base)) ? `; none of them is its ctx.idempotencyKey "${base}": the tool does not pass it on` : '';
      failures.push(
        `call ${callId} reached the service with ${keys.length === 2 ? 'two' : keys.length} different keys (${op}): ${what}${dropped}. ` +
          `Tool ${attempts[0]?.tool} must send the same idempotency key on every attempt (ctx.idempotencyKey, or a key built from it), ` +
          `or the service cannot tell a retry from a new request`,
      );
    }
  }
  return failures;
}
