/**
 * A small MCP server of the example's own (stdio), written with the official SDK: the kind of
 * server a team would put in front of its inventory system. Its tools carry MCP annotations,
 * which is all Logbook needs to pick their policies. Reservations and shipments live in a JSON
 * file (WAREHOUSE_STATE), so they survive a killed worker and its server process alike.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

interface State {
  /** Reservation id by idempotency key: the same key never reserves twice. */
  reservations: Record<string, { id: string; sku: string; quantity: number }>;
  shipments: { reservationId: string; address: string }[];
}

const file = process.env.WAREHOUSE_STATE ?? join(tmpdir(), 'logbook-warehouse.json');
const STOCK: Record<string, { name: string; inStock: number }> = {
  'sku-anvil': { name: 'Anvil, 50 kg', inStock: 3 },
  'sku-rope': { name: 'Rope, 20 m', inStock: 40 },
};

function load(): State {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as State) : { reservations: {}, shipments: [] };
}

function save(state: State): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(state));
  renameSync(`${file}.tmp`, file);
}

const server = new McpServer({ name: 'warehouse', version: '1.0.0' });

server.registerTool(
  'find_item',
  { description: 'Find an item by SKU: its name and how many are in stock.', inputSchema: { sku: z.string().min(1) }, annotations: { readOnlyHint: true } },
  async ({ sku }) => {
    const item = STOCK[sku];
    if (!item) return { isError: true, content: [{ type: 'text', text: `no item ${sku}` }] };
    const structuredContent = { sku, ...item };
    return { structuredContent, content: [{ type: 'text', text: JSON.stringify(structuredContent) }] };
  },
);

server.registerTool(
  'reserve_item',
  {
    description: 'Reserve stock for an order. Deduplicated by the idempotency key in the request _meta.',
    inputSchema: { sku: z.string().min(1), quantity: z.number().int().positive() },
    annotations: { readOnlyHint: false, idempotentHint: true },
  },
  async ({ sku, quantity }, extra) => {
    const key = String(extra._meta?.['logbook/idempotency-key'] ?? `anonymous-${Date.now()}`);
    const state = load();
    const reservation = state.reservations[key] ?? { id: `res-${Object.keys(state.reservations).length + 1}`, sku, quantity };
    state.reservations[key] = reservation;
    save(state);
    return { content: [{ type: 'text', text: `reserved ${quantity} x ${sku} as ${reservation.id}` }] };
  },
);

server.registerTool(
  'ship_order',
  {
    description: 'Hand a reservation to the carrier. Cannot be undone.',
    inputSchema: { reservationId: z.string().min(1), address: z.string().min(1) },
    annotations: { readOnlyHint: false, destructiveHint: true },
  },
  async ({ reservationId, address }) => {
    const state = load();
    state.shipments.push({ reservationId, address });
    save(state);
    return { content: [{ type: 'text', text: `shipped ${reservationId} to ${address}` }] };
  },
);

await server.connect(new StdioServerTransport());
