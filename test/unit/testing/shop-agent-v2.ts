/**
 * The shop's next version as an agents module, with a breaking change: charge_card now requires
 * a currency, so its schema hash changed and runs pinned to version 1 have no implementation.
 */
import { z } from 'zod';
import { defineAgent, defineAgents, defineTool, type JsonValue } from 'logbook';
import { effectLog } from 'logbook/testing';
import { SHOP_MODEL, shopModel, shopTools } from './shop-agent.js';

export default () => {
  const effects = effectLog<JsonValue>();
  const charge = defineTool({
    name: 'charge_card',
    version: '2',
    description: 'Charge the card in a currency.',
    input: z.object({ amount: z.number().positive(), currency: z.string().length(3) }),
    policy: 'escalate',
    timeoutMs: 5_000,
    execute: async ({ amount, currency }, ctx) => effects.write('charge', ctx.idempotencyKey, { charged: amount, currency }).detail ?? null,
  });
  const tools = [...shopTools(effects).filter((t) => t.name !== 'charge_card'), charge];
  return defineAgents({
    agents: [
      defineAgent({
        name: 'shop',
        version: '2',
        model: { id: SHOP_MODEL, maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
        system: { version: 'p2', text: 'You sell mugs, in any currency.' },
        tools,
      }),
    ],
    models: { [SHOP_MODEL]: () => shopModel() },
  });
};
