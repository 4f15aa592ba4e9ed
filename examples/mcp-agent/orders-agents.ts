/**
 * Agents that call agents: `logbook dev --agents examples/mcp-agent/orders-agents.ts`. The `orders`
 * agent checks stock with the warehouse MCP server's `find_item` tool itself, then hands the order
 * to the `warehouse` agent (agents.ts) through agentTool: that call starts a child run, the parent
 * waits holding no Lambda, and the child's answer becomes the tool result.
 */
import { agentTool, defineAgent, defineAgents, mcpTools, ScriptedModel, type Agents, type ModelRequest, type ScriptStep } from 'logbook';
import { WAREHOUSE_MODEL_ID, warehouseTransport } from './agents.js';
import { warehouseScript } from './script.js';

export const ORDERS_MODEL_ID = 'scripted:orders-v1';

function lastResult(request: ModelRequest, tool: string): string | undefined {
  for (const m of [...request.messages].reverse()) if (m.role === 'tool' && m.name === tool) return m.content;
  return undefined;
}

/** The parent's scripted model: look the item up (MCP), hand fulfilment to the child, answer. */
export function ordersScript(sku = 'sku-anvil', address = '1 Main St, Springfield'): ScriptStep[] {
  return [
    { text: 'Checking stock.', calls: [{ name: 'warehouse_find_item', args: { sku } }] },
    { text: 'In stock: the warehouse agent fulfils it.', calls: [{ name: 'fulfil_order', args: { task: `Ship one ${sku} to ${address}` } }] },
    (request) => ({ text: `Order handled. The warehouse agent says: ${lastResult(request, 'fulfil_order') ?? 'nothing'}` }),
  ];
}

export async function createOrdersAgents(env: Record<string, string | undefined> = process.env): Promise<Agents> {
  // One connection for both agents: the parent uses find_item, the child all three tools.
  const tools = await mcpTools({ transport: warehouseTransport(env), prefix: 'warehouse_', timeoutMs: 10_000, trustAnnotations: true });
  const warehouse = defineAgent({
    name: 'warehouse',
    version: '1.0.0',
    model: { id: WAREHOUSE_MODEL_ID, maxOutputTokens: 1024, price: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 } },
    system: { version: 'w1', text: 'You fulfil orders with the warehouse tools. Never ship twice.' },
    tools,
    budgets: { maxSteps: 10, maxCostUsd: 1 },
  });
  const orders = defineAgent({
    name: 'orders',
    version: '1.0.0',
    model: { id: ORDERS_MODEL_ID, maxOutputTokens: 1024, price: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 } },
    system: { version: 'o1', text: 'You take orders: check stock, then let the warehouse agent fulfil them.' },
    tools: [
      ...tools.filter((t) => t.name === 'warehouse_find_item'),
      agentTool(warehouse, {
        name: 'fulfil_order',
        description: 'Hand an order to the warehouse agent, which reserves and ships it.',
        // What the child may spend; each is capped by what this run has left, and reserved from it.
        budgets: { maxSteps: 8, maxInputTokens: 100_000, maxOutputTokens: 8_000, maxCostUsd: 0.5, deadlineSeconds: 3_600 },
      }),
    ],
    budgets: { maxSteps: 10, maxCostUsd: 2 },
  });
  return defineAgents({
    // The child agent is registered with its parent; it can also be started on its own.
    agents: [orders],
    models: {
      [ORDERS_MODEL_ID]: () => new ScriptedModel(ordersScript()),
      [WAREHOUSE_MODEL_ID]: () => new ScriptedModel(warehouseScript()),
    },
  });
}

/** Built once per cold start (Lambda init, `logbook dev` worker process, API process). */
export default () => createOrdersAgents();
