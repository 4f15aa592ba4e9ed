/**
 * examples/mcp-agent/orders-agents.ts: an agent that uses the MCP server's tools and a child agent
 * (agentTool) runs to completion on the engine; the child ships once, its answer is the parent's
 * tool result, and the crash harness holds over the parent-child handshake with a real MCP server.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { childRunId } from '../../lib/engine/child-runs.js';
import { startRun } from '../../lib/engine/start-run.js';
import { driveRun } from '../../lib/testing/driver.js';
import { memoryStorage, spawnWorker, type World } from '../../lib/testing/world.js';
import { createOrdersAgents } from '../../examples/mcp-agent/orders-agents.js';
import { logOf } from '../unit/engine/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'logbook-orders-'));
const WAREHOUSE_STATE = join(dir, 'state.json');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('examples/mcp-agent/orders-agents.ts', () => {
  it('checks stock over MCP, hands the order to the warehouse child run, and answers with its result', async () => {
    const agents = await createOrdersAgents({ WAREHOUSE_STATE });
    const world: World = { storage: memoryStorage(), clock: new ManualClock(), registry: agents.registry, models: { resolve: (id) => agents.model(id) } };
    const worker = spawnWorker(world);
    const run = { tenant: 'demo', runId: 'order-1' };
    await startRun(worker.deps, { ...run, agent: 'orders', input: 'Ship one anvil to 1 Main St' });
    const done = await driveRun(world, run, { worker: () => worker });
    expect(done.head.status).toBe('completed');
    const parent = await logOf(world, run);
    const call = Object.values(parent.state.calls).find((c) => c.name === 'fulfil_order')!;
    const child = await logOf(world, { tenant: 'demo', runId: childRunId('order-1', call.callId) });
    expect(child.events[0]).toMatchObject({ agent: { name: 'warehouse' }, parent: { runId: 'order-1', callId: call.callId }, input: { value: { task: 'Ship one sku-anvil to 1 Main St, Springfield' } } });
    expect(child.state.lastText).toEqual({ kind: 'inline', value: 'Done: shipped res-1 to 1 Main St, Springfield.' });
    expect(parent.state.lastText).toEqual({ kind: 'inline', value: 'Order handled. The warehouse agent says: Done: shipped res-1 to 1 Main St, Springfield.' });
    const saved = JSON.parse(readFileSync(WAREHOUSE_STATE, 'utf8')) as { shipments: unknown[] };
    expect(saved.shipments).toHaveLength(1);
    expect(agents.modelIds).toEqual(expect.arrayContaining(['scripted:orders-v1', 'scripted:warehouse-v1']));
  });
});
