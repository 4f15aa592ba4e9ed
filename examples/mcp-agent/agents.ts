/**
 * An agents module whose tools come from an MCP server: `logbook dev --agents examples/mcp-agent/agents.ts`.
 * The default export is async: it runs once per cold start, lists the server's tools (so they are
 * pinned by schema in every run_started) and keeps the connection for the warm container.
 * Locally the warehouse server runs over stdio from its TypeScript source; WAREHOUSE_MCP_URL
 * points the agent at a Streamable HTTP deployment of it instead.
 */
import { fileURLToPath } from 'node:url';
import { defineAgent, defineAgents, mcpTools, ScriptedModel, type Agents, type McpTransport } from 'logbook';
import { warehouseScript } from './script.js';

export const WAREHOUSE_MODEL_ID = 'scripted:warehouse-v1';

export function warehouseTransport(env: Record<string, string | undefined> = process.env): McpTransport {
  if (env.WAREHOUSE_MCP_URL) return { url: env.WAREHOUSE_MCP_URL };
  return {
    command: process.execPath,
    args: ['--import', tsxLoader(), fileURLToPath(new URL('./warehouse-server.ts', import.meta.url))],
    // A stdio server gets only the SDK's safe environment plus what is passed here.
    env: env.WAREHOUSE_STATE ? { WAREHOUSE_STATE: env.WAREHOUSE_STATE } : {},
    // Deployed, the CDK construct bundles the server into the worker and runs `node <bundle>` instead
    // of the command above; the API and the trigger never start it (docs/guides/mcp.md).
    bundle: { entry: 'examples/mcp-agent/warehouse-server.ts' },
  };
}

/** tsx, which runs the server from its TypeScript source locally. A deployed bundle has none and never uses it. */
function tsxLoader(): string {
  try {
    return import.meta.resolve('tsx');
  } catch {
    return 'tsx';
  }
}

export async function createWarehouseAgents(env: Record<string, string | undefined> = process.env): Promise<Agents> {
  const tools = await mcpTools({
    transport: warehouseTransport(env),
    prefix: 'warehouse_',
    timeoutMs: 10_000,
    // Our own server, so its annotations are believed (by default they are not, and every tool escalates).
    trustAnnotations: true,
    // The annotations say: find_item rerun, reserve_item idempotency_key, ship_order escalate.
    // An override would go here, e.g. policies: { ship_order: { policy: 'verify', verify } }.
  });
  return defineAgents({
    agents: [
      defineAgent({
        name: 'warehouse',
        version: '1.0.0',
        model: { id: WAREHOUSE_MODEL_ID, maxOutputTokens: 1024, price: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 } },
        system: { version: 'w1', text: 'You fulfil orders with the warehouse tools. Never ship twice.' },
        tools,
        budgets: { maxSteps: 10, maxCostUsd: 1 },
      }),
    ],
    models: { [WAREHOUSE_MODEL_ID]: () => new ScriptedModel(warehouseScript()) },
  });
}

/** Built once per cold start (Lambda init, `logbook dev` worker process, API process). */
export default () => createWarehouseAgents();
