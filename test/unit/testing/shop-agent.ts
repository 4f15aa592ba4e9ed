/**
 * A small agent of these tests' own (not the support demo), written the way an application would
 * write one, with the public entry points only: a shop that checks stock, reserves an item,
 * charges a card and emails a receipt. Its fake services write to an effectLog().
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ScriptedModel, defineAgent, defineAgents, defineTool, type Agents, type BudgetRequest, type JsonValue, type Policy, type ToolContext } from 'logbook';
import { agentsWorld, effectLog, resolveFromEffects, type EffectRecorder, type HarnessScenario, type World } from 'logbook/testing';

export const SHOP_MODEL = 'scripted:shop';

export interface ShopOptions {
  /** The policy of charge_card; `rerun` is the bug the harness must catch (charging is not idempotent). */
  chargePolicy?: Policy;
  budgets?: BudgetRequest;
  /** Leave the model out of the app's models (a deploy that dropped it). */
  noModel?: boolean;
  /**
   * How the card processor and the mail service take a write (the harness's own mutation tests):
   * `careful` (default) refuses a fencing token below the highest it saw for the key and a request
   * past its deadline (effects.writeFenced with ctx.fencingToken and ctx.notAfter); `careless`
   * applies whatever arrives; `no-token` / `no-deadline`: the tools leave that part out.
   */
  services?: 'careful' | 'careless' | 'no-token' | 'no-deadline';
  /** How reserve_item keys its write: ctx.idempotencyKey (default), per attempt, or at random (a dropped key). */
  reserveKey?: 'call' | 'attempt' | 'random';
}

/** The stamp the shop's tools send with a write, or none (a careless service applies anything). */
function stampOf(ctx: ToolContext, services: ShopOptions['services']): { token: number; notAfter: number } | undefined {
  if (services === 'careless') return undefined;
  return { token: services === 'no-token' ? 0 : ctx.fencingToken, notAfter: services === 'no-deadline' ? Infinity : ctx.notAfter };
}

function reserveKeyOf(ctx: ToolContext, how: ShopOptions['reserveKey']): string {
  if (how === 'attempt') return `${ctx.idempotencyKey}:attempt-${ctx.attempt}`;
  if (how === 'random') return randomUUID();
  return ctx.idempotencyKey;
}

export function shopTools(effects: EffectRecorder<JsonValue>, options: ShopOptions = {}) {
  return [
    defineTool({
      name: 'check_stock',
      version: '1',
      description: 'How many of an item are in stock.',
      input: z.object({ sku: z.string() }),
      policy: 'rerun',
      timeoutMs: 5_000,
      async execute({ sku }, ctx) {
        effects.read('stock', ctx.idempotencyKey, { sku });
        return { sku, inStock: 3 };
      },
    }),
    defineTool({
      name: 'reserve_item',
      version: '1',
      description: 'Reserve an item; the warehouse deduplicates by idempotency key.',
      input: z.object({ sku: z.string() }),
      policy: 'idempotency_key',
      timeoutMs: 5_000,
      async execute({ sku }, ctx) {
        return effects.writeOnce('reserve', reserveKeyOf(ctx, options.reserveKey), { reservation: `res-${sku}` }).detail ?? null;
      },
    }),
    defineTool({
      name: 'charge_card',
      version: '1',
      description: 'Charge the card. Irreversible, and the processor cannot be asked afterwards.',
      input: z.object({ amount: z.number().positive() }),
      policy: options.chargePolicy ?? 'escalate',
      timeoutMs: 5_000,
      async execute({ amount }, ctx) {
        const stamp = stampOf(ctx, options.services);
        const charge = stamp ? effects.writeFenced('charge', ctx.idempotencyKey, stamp, { charged: amount }) : effects.write('charge', ctx.idempotencyKey, { charged: amount });
        return charge.detail ?? null;
      },
    }),
    defineTool({
      name: 'send_receipt',
      version: '1',
      description: 'Email the receipt; the mail log can be searched by key.',
      input: z.object({ to: z.string() }),
      policy: 'verify',
      timeoutMs: 5_000,
      async execute({ to }, ctx) {
        const stamp = stampOf(ctx, options.services);
        const sent = stamp ? effects.writeFenced('receipt', ctx.idempotencyKey, stamp, { sent: to }) : effects.write('receipt', ctx.idempotencyKey, { sent: to });
        return sent.detail ?? null;
      },
      async verify(_args, ctx) {
        // The look raises the key's fence first: a late send from an older worker is refused from now on.
        if (options.services !== 'careless' && options.services !== 'no-token') effects.fence('receipt', ctx.idempotencyKey, ctx.fencingToken);
        const sent = effects.find(ctx.idempotencyKey, 'receipt');
        return sent ? { status: 'landed', output: sent.detail ?? null } : { status: 'not_landed' };
      },
    }),
  ];
}

/** The model's script: stock and reservation in parallel, then the charge, the receipt, the answer. */
export function shopModel(): ScriptedModel {
  return new ScriptedModel([
    { calls: [{ name: 'check_stock', args: { sku: 'mug' } }, { name: 'reserve_item', args: { sku: 'mug' } }] },
    { calls: [{ name: 'charge_card', args: { amount: 12 } }] },
    { calls: [{ name: 'send_receipt', args: { to: 'ana@example.com' } }] },
    { text: 'Mug reserved, charged and receipted.' },
  ]);
}

export function shopAgents(effects: EffectRecorder<JsonValue>, options: ShopOptions = {}): Agents {
  return defineAgents({
    agents: [
      defineAgent({
        name: 'shop',
        version: '1',
        model: { id: SHOP_MODEL, maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
        system: { version: 'p1', text: 'You sell mugs.' },
        tools: shopTools(effects, options),
        graceMs: 1_000,
        ...(options.budgets ? { budgets: options.budgets } : {}),
      }),
    ],
    models: options.noModel ? {} : { [SHOP_MODEL]: () => shopModel() },
  });
}

export interface ShopWorld extends World {
  effects: EffectRecorder<JsonValue>;
}

/** The scenario a user would write for this agent; `resolver: false` leaves parks unanswered. */
export function shopScenario(options: ShopOptions & { resolver?: boolean; serviceLagMs?: number } = {}): HarnessScenario<ShopWorld> {
  return {
    name: `shop (charge_card: ${options.chargePolicy ?? 'escalate'}${options.services ? `; services ${options.services}` : ''})`,
    world: () => {
      // The services' clock is the world's (behind it by serviceLagMs: a service whose clock lags).
      const time: { now?: () => number } = {};
      const effects = effectLog<JsonValue>({ now: () => (time.now?.() ?? 0) - (options.serviceLagMs ?? 0) });
      const world = agentsWorld(shopAgents(effects, options));
      time.now = () => world.clock.now();
      return { ...world, effects };
    },
    request: { tenant: 't', runId: 'order-1', agent: 'shop', input: 'One mug for ana@example.com, please.' },
    sideEffects: (world) => world.effects.all(),
    ...(options.resolver === false ? {} : { resolver: (world: ShopWorld) => resolveFromEffects(world.effects) }),
  };
}

/** As an agents module: `logbook replay-check --agents test/unit/testing/shop-agent.ts`. */
export default () => shopAgents(effectLog<JsonValue>());
