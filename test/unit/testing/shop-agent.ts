/**
 * A small agent of these tests' own (not the support demo), written the way an application would
 * write one, with the public entry points only: a shop that checks stock, reserves an item,
 * charges a card and emails a receipt. Its fake services write to an effectLog().
 */
import { z } from 'zod';
import { ScriptedModel, defineAgent, defineAgents, defineTool, type Agents, type BudgetRequest, type JsonValue, type Policy } from 'logbook';
import { agentsWorld, effectLog, resolveFromEffects, type EffectRecorder, type HarnessScenario, type World } from 'logbook/testing';

export const SHOP_MODEL = 'scripted:shop';

export interface ShopOptions {
  /** The policy of charge_card; `rerun` is the bug the harness must catch (charging is not idempotent). */
  chargePolicy?: Policy;
  budgets?: BudgetRequest;
  /** Leave the model out of the app's models (a deploy that dropped it). */
  noModel?: boolean;
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
        return effects.writeOnce('reserve', ctx.idempotencyKey, { reservation: `res-${sku}` }).detail ?? null;
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
        return effects.write('charge', ctx.idempotencyKey, { charged: amount }).detail ?? null;
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
        return effects.write('receipt', ctx.idempotencyKey, { sent: to }).detail ?? null;
      },
      async verify(_args, ctx) {
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
export function shopScenario(options: ShopOptions & { resolver?: boolean } = {}): HarnessScenario<ShopWorld> {
  return {
    name: `shop (charge_card: ${options.chargePolicy ?? 'escalate'})`,
    world: () => {
      const effects = effectLog<JsonValue>();
      return { ...agentsWorld(shopAgents(effects, options)), effects };
    },
    request: { tenant: 't', runId: 'order-1', agent: 'shop', input: 'One mug for ana@example.com, please.' },
    sideEffects: (world) => world.effects.all(),
    ...(options.resolver === false ? {} : { resolver: (world: ShopWorld) => resolveFromEffects(world.effects) }),
  };
}

/** As an agents module: `logbook replay-check --agents test/unit/testing/shop-agent.ts`. */
export default () => shopAgents(effectLog<JsonValue>());
