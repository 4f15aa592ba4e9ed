/**
 * The crash harness over a real MCP server (stdio): a run that reads (rerun), writes with a key
 * the server dedupes (idempotency_key) and makes an irreversible payment (escalate), crashed at
 * every checkpoint, at pairs of them, and frozen past its lease. No write may land twice.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { AgentRegistry } from '../../lib/authoring/registry.js';
import { defineAgent } from '../../lib/authoring/define-agent.js';
import { ScriptedModel, StaticModelResolver, type ScriptStep } from '../../lib/models/scripted-model.js';
import { runCrashHarness } from '../../lib/testing/crash-harness.js';
import type { SideEffectRecord } from '../../lib/testing/side-effects.js';
import { memoryStorage, type World } from '../../lib/testing/world.js';
import { connectMcpServer, type McpServerTools } from '../../lib/tools/mcp/mcp-tools.js';
import { FixtureDir } from '../fixtures/mcp/fixture.js';

const dir = new FixtureDir();
let server: McpServerTools;
beforeAll(async () => {
  server = await connectMcpServer({ transport: dir.stdio(), prefix: 'fx_', include: ['lookup', 'upsert_note', 'send_payment'], timeoutMs: 5_000, trustAnnotations: true });
});
afterAll(async () => {
  await server.close();
  dir.cleanup();
});

const script: ScriptStep[] = [
  { calls: [{ name: 'fx_lookup', args: { id: 'a1' } }, { name: 'fx_upsert_note', args: { note: 'customer called' } }] },
  { calls: [{ name: 'fx_send_payment', args: { amountCents: 1299 } }] },
  { text: 'looked up, noted, paid' },
];

/** Every point gets empty server state (it is all in files the server reads on each call). */
function freshWorld(): World {
  rmSync(join(dir.path, 'ledger.jsonl'), { force: true });
  rmSync(join(dir.path, 'notes.json'), { force: true });
  const agent = defineAgent({
    name: 'agent',
    version: '1',
    model: { id: 'scripted:mcp', maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    system: { version: 'p1', text: 'Use the fixture tools.' },
    tools: server.tools,
    graceMs: 1_000,
  });
  return { storage: memoryStorage(), clock: new ManualClock(), registry: new AgentRegistry().register(agent), models: new StaticModelResolver({ 'scripted:mcp': new ScriptedModel(script) }) };
}

describe('crash harness over an MCP server', () => {
  it('holds at every crash point: reads may repeat, the keyed write lands once, the payment is never made twice', async () => {
    const report = await runCrashHarness<World, SideEffectRecord>({
      name: 'mcp',
      world: freshWorld,
      request: { tenant: 't', runId: 'r', agent: 'agent', input: 'go' },
      sideEffects: () =>
        dir.calls().map((c) => ({ key: c.key ?? '', op: c.tool ?? '', readOnly: c.tool === 'lookup', applied: c.tool === 'upsert_note' ? c.applied === true : true })),
      // A person answers an unknown payment by checking the provider: here, it went through.
      // Run-level parks (two crashes around one model call: model_stalled) get retry, as an operator would.
      resolver: () => (attention) => (attention.callId ? { callId: attention.callId, outcome: 'succeeded', result: 'paid (confirmed by a person)' } : 'retry'),
    });
    expect(report.points.filter((p) => !p.held).map((p) => ({ at: p.at, failures: p.failures }))).toEqual([]);
    expect(report.baseline).toMatchObject({ status: 'completed', sideEffects: 3 });
    // Some points really did crash mid-call, and some were answered by the person.
    expect(report.points.some((p) => p.resolutions > 0)).toBe(true);
    console.info(`mcp crash harness: ${report.points.length} points over ${report.baseline.checkpoints} checkpoints, ${report.held} held`);
  }, 180_000);
});
