/**
 * examples/mcp-agent: its agents module (an async factory over a stdio MCP server of its own)
 * runs a run to completion on the engine, and the CDK construct can read the models it pins.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { discoverModelIds } from '../../lib/cdk/agents-module.js';
import { startRun } from '../../lib/engine/start-run.js';
import { driveRun } from '../../lib/testing/driver.js';
import { memoryStorage, spawnWorker, type World } from '../../lib/testing/world.js';
import { createWarehouseAgents, WAREHOUSE_MODEL_ID } from '../../examples/mcp-agent/agents.js';
import { logOf } from '../unit/engine/helpers.js';

const AGENTS_MODULE = fileURLToPath(new URL('../../examples/mcp-agent/agents.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'logbook-warehouse-'));
const WAREHOUSE_STATE = join(dir, 'state.json');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('examples/mcp-agent', () => {
  it('runs to completion: find (rerun), reserve (idempotency_key, key in _meta), ship (escalate)', async () => {
    const agents = await createWarehouseAgents({ WAREHOUSE_STATE });
    const world: World = {
      storage: memoryStorage(),
      clock: new ManualClock(),
      registry: agents.registry,
      models: { resolve: (id) => agents.model(id) },
    };
    const worker = spawnWorker(world);
    const run = { tenant: 'demo', runId: 'order-1' };
    await startRun(worker.deps, { ...run, agent: 'warehouse', input: 'Ship one anvil to 1 Main St' });
    const done = await driveRun(world, run, { worker: () => worker });
    expect(done.head.status).toBe('completed');
    const { state, events } = await logOf(world, run);
    expect(state.lastText).toEqual({ kind: 'inline', value: 'Done: shipped res-1 to 1 Main St, Springfield.' });
    const pinned = (events[0] as unknown as { tools: { name: string; policy: string }[] }).tools.map((t) => [t.name, t.policy]);
    expect(pinned).toEqual([
      ['warehouse_find_item', 'rerun'],
      ['warehouse_reserve_item', 'idempotency_key'],
      ['warehouse_ship_order', 'escalate'],
    ]);
    const saved = JSON.parse(readFileSync(WAREHOUSE_STATE, 'utf8')) as { reservations: Record<string, unknown>; shipments: unknown[] };
    // The reservation is keyed by the call's idempotency key, tenant:runId:callId.
    const reserve = Object.values(state.calls).find((c) => c.name === 'warehouse_reserve_item');
    expect(Object.keys(saved.reservations)).toEqual([`demo:order-1:${reserve!.callId}`]);
    expect(saved.shipments).toHaveLength(1);
  });

  it('cdk synth reads the models it pins, although its MCP connection would keep a process alive', () => {
    expect(discoverModelIds(AGENTS_MODULE, { WAREHOUSE_STATE })).toEqual([WAREHOUSE_MODEL_ID]);
  });
});
