/**
 * MCP servers as durable tools, against real MCP servers (the SDK's McpServer, test/fixtures/mcp/)
 * over stdio and Streamable HTTP on 127.0.0.1, with runs driven through the engine on the memory
 * fakes. A "cold start" after a crash is a new connectMcpServer() (a new connection, as a new process
 * would make) and a new registry, exactly what resolveAgents builds on a fresh container.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ToolOutcomeUnknownError } from '../../lib/core/errors.js';
import { startRun } from '../../lib/engine/start-run.js';
import type { ScriptStep } from '../../lib/models/scripted-model.js';
import { scriptedWorld } from '../../lib/testing/scripted-world.js';
import { toolTestContext } from '../../lib/testing/tool-context.js';
import { spawnWorker } from '../../lib/testing/world.js';
import { McpConnectionClosedError } from '../../lib/tools/mcp/errors.js';
import { mcpTools } from '../../lib/tools/mcp/mcp-tools.js';
import type { McpToolsOptions } from '../../lib/tools/mcp/options.js';
import { killPid } from '../fixtures/mcp/fixture.js';
import { cleanUpAfterEach, coldStart, connect, crashFirstStep, drive, fixture, mcpRun } from '../fixtures/mcp/mcp-world.js';
import { logOf } from '../unit/engine/helpers.js';

/** A tool timeout no test here may reach (vitest gives each test 60 s): waiting it out fails the test. */
const MUCH_LONGER_THAN_THE_TEST = 200_000;

cleanUpAfterEach();

describe('MCP tools are pinned by the server schema, with policies from annotations', () => {
  it('lists the server tools as Logbook tools: prefixed names, the JSON schema pinned in run_started, annotation policies', async () => {
    const dir = fixture();
    const server = await connect(dir.stdio());
    expect(server.server).toBe('fixture@1.0.0');
    expect(Object.fromEntries(server.tools.map((t) => [t.name, t.policy]))).toEqual({
      fx_lookup: 'rerun',
      fx_upsert_note: 'idempotency_key',
      fx_find_note: 'rerun',
      fx_send_payment: 'escalate',
      fx_inventory: 'rerun',
      fx_broken: 'rerun',
      fx_report: 'rerun',
    });
    const t = await mcpRun(server, [{ text: 'hi' }]);
    const { events } = await logOf(t.world, t.run);
    const pinned = (events[0] as unknown as { tools: { name: string; version: string; inputSchema: unknown; policy: string }[] }).tools;
    expect(pinned.find((p) => p.name === 'fx_lookup')).toMatchObject({
      version: 'fixture@1.0.0',
      policy: 'rerun',
      inputSchema: { type: 'object', properties: { id: { type: 'string', minLength: 1 } }, required: ['id'] },
    });
  });

  it("a server run from an installed package pins its tools under the package's name@version, not the version it reports", async () => {
    // The MCP SDK's own example server: it says `1.0.0` in every SDK release.
    const example = 'node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/mcpServerOutputSchema.js';
    const sdk = (JSON.parse(readFileSync('node_modules/@modelcontextprotocol/sdk/package.json', 'utf8')) as { version: string }).version;
    const server = await connect({ command: process.execPath, args: [example], stderr: 'ignore' }, { prefix: 'ex_' });
    expect(server.server).toBe('mcp-output-schema-high-level-example@1.0.0');
    expect(server.version).toBe(`@modelcontextprotocol/sdk@${sdk}`);
    expect(server.tools.map((t) => [t.name, t.version])).toEqual([['ex_get_weather', `@modelcontextprotocol/sdk@${sdk}`]]);
    // The description still names the server as it names itself.
    expect(server.tools[0]!.description).toContain('Tool of MCP server mcp-output-schema-high-level-example@1.0.0.');
    const t = await mcpRun(server, [{ text: 'hi' }]);
    const { events } = await logOf(t.world, t.run);
    expect((events[0] as unknown as { tools: { name: string; version: string }[] }).tools).toEqual([expect.objectContaining({ name: 'ex_get_weather', version: `@modelcontextprotocol/sdk@${sdk}` })]);
    // The fixture runs from this repository (a bundle in node_modules/.cache, in no package): its own word.
    expect((await connect(fixture().stdio())).version).toBe('fixture@1.0.0');
  });

  it('the agent overrides policies and timeouts, picks tools with include, or distrusts annotations', async () => {
    const dir = fixture();
    const overridden = await connect(dir.stdio(), {
      include: ['lookup', 'send_payment', 'upsert_note'],
      policies: { send_payment: 'idempotency_key', lookup: { policy: 'escalate', timeoutMs: 2_000 } },
    });
    expect(overridden.tools.map((t) => [t.name, t.policy, t.timeoutMs])).toEqual([
      ['fx_lookup', 'escalate', 2_000],
      ['fx_upsert_note', 'idempotency_key', 5_000],
      ['fx_send_payment', 'idempotency_key', 5_000],
    ]);
    const distrusted = await connect(dir.stdio(), { trustAnnotations: false, include: (t) => t.name !== 'report' });
    expect(new Set(distrusted.tools.map((t) => t.policy))).toEqual(new Set(['escalate']));
    expect(distrusted.tools.map((t) => t.name)).not.toContain('fx_report');
    await expect(connect(dir.stdio(), { include: ['lookup', 'nope'] })).rejects.toThrow(/has no tool nope/);
  });
});

describe('calls through the engine', () => {
  const everyKind: ScriptStep[] = [
    {
      calls: [
        { name: 'fx_lookup', args: { id: 'a1' } },
        { name: 'fx_inventory', args: {} },
        { name: 'fx_broken', args: {} },
        { name: 'fx_report', args: { kb: 40 } },
        { name: 'fx_upsert_note', args: { note: 'hello' } },
        { name: 'fx_lookup', args: { key: 'a1' } },
      ],
    },
    { text: 'done' },
  ];

  it('stdio: text, structured content, isError, a large result offloaded, the key in _meta, invalid args never sent, one connection', async () => {
    const dir = fixture();
    const server = await connect(dir.stdio());
    const t = await mcpRun(server, everyKind);
    const done = await drive(t.world, t.run);
    expect(done.head.status).toBe('completed');
    const { state } = await logOf(t.world, t.run);
    const result = (i: number) => state.calls[`3-${i}`]!.result!;
    expect(result(0)).toMatchObject({ ok: true, output: { kind: 'inline', value: 'item a1' } });
    expect(result(1)).toMatchObject({ ok: true, output: { kind: 'inline', value: { count: 2, items: ['anvil', 'rope'] } } });
    expect(result(2)).toMatchObject({ ok: false, errorCode: 'mcp_tool_error', output: { kind: 'inline', value: { error: 'mcp_tool_error', message: 'warehouse offline' } } });
    expect(result(3)).toMatchObject({ ok: true, output: { kind: 'blob', size: 40 * 1024 + 2 } });
    expect(result(4)).toMatchObject({ ok: true, output: { kind: 'inline', value: 'saved n-1' } });
    expect(result(5)).toMatchObject({ ok: false, errorCode: 'invalid_arguments', source: 'validation' });
    expect(JSON.stringify(result(5).output)).toContain('id: is required');
    // The server saw the idempotency key and the fencing token in _meta; the invalid call never left.
    expect(dir.calls('upsert_note')).toEqual([expect.objectContaining({ key: 't:r:3-4', fencingToken: 1, applied: true })]);
    expect(dir.calls('lookup')).toHaveLength(1);
    expect(dir.calls()).toHaveLength(5);
    // Five calls, one connection.
    expect(dir.initializes()).toHaveLength(1);
    expect(server.connects).toBe(1);
  });

  it('Streamable HTTP: the same results over one session, reused by a second run in the same container', async () => {
    const dir = fixture();
    const { url } = await dir.http();
    const server = await connect({ url });
    const t = await mcpRun(server, everyKind);
    expect((await drive(t.world, t.run)).head.status).toBe('completed');
    const second = { tenant: 't', runId: 'r2' };
    await startRun(t.worker.deps, { ...second, agent: 'agent', input: 'again' });
    expect((await drive(t.world, second)).head.status).toBe('completed');
    const { state } = await logOf(t.world, second);
    expect(state.calls['3-1']!.result).toMatchObject({ ok: true, output: { kind: 'inline', value: { count: 2, items: ['anvil', 'rope'] } } });
    expect(state.calls['3-2']!.result).toMatchObject({ ok: false, errorCode: 'mcp_tool_error' });
    expect(dir.calls('upsert_note').map((c) => c.key)).toEqual(['t:r:3-4', 't:r2:3-4']);
    expect(dir.calls()).toHaveLength(10);
    expect(dir.initializes()).toHaveLength(1);
  });
});

describe('crashes, deploys and servers that die', () => {
  it('idempotentHint: a worker that dies after the call lands is resumed with the same key in _meta, and the server dedupes', async () => {
    const dir = fixture();
    const first = await connect(dir.stdio());
    const t = await mcpRun(first, [{ calls: [{ name: 'fx_upsert_note', args: { note: 'once' } }] }, { text: 'saved' }]);
    await crashFirstStep(t, 'after-tool:fx_upsert_note');
    await first.close(); // the process is gone, and its connection with it
    const world = coldStart(t.world, t.agent, await connect(dir.stdio()));
    const done = await drive(world, t.run);
    expect(done.head.status).toBe('completed');
    const { state } = await logOf(world, t.run);
    expect(state.calls['3-0']).toMatchObject({ attempt: 2, result: { ok: true, output: { kind: 'inline', value: 'saved n-1' } } });
    expect(dir.calls('upsert_note').map((c) => [c.key, c.applied])).toEqual([
      ['t:r:3-0', true],
      ['t:r:3-0', false],
    ]);
  });

  it('a verify override looks the write up with another tool of the same server: landed, so it is recorded and never repeated', async () => {
    const dir = fixture();
    const options: Partial<McpToolsOptions> = {
      policies: {
        upsert_note: {
          policy: 'verify',
          verify: async (_args, ctx, server) => {
            const found = (await server.callTool('find_note', { key: ctx.idempotencyKey }, { signal: ctx.signal })) as { found: boolean; id?: string };
            return found.found ? { status: 'landed', output: `saved ${found.id}` } : { status: 'not_landed' };
          },
        },
      },
    };
    const first = await connect(dir.stdio(), options);
    const t = await mcpRun(first, [{ calls: [{ name: 'fx_upsert_note', args: { note: 'once' } }] }, { text: 'saved' }]);
    await crashFirstStep(t, 'after-tool:fx_upsert_note');
    await first.close();
    const world = coldStart(t.world, t.agent, await connect(dir.stdio(), options));
    expect((await drive(world, t.run)).head.status).toBe('completed');
    const { state, types } = await logOf(world, t.run);
    expect(types).toContain('tool_verified');
    expect(state.calls['3-0']).toMatchObject({ attempt: 1, result: { ok: true, source: 'verify', output: { kind: 'inline', value: 'saved n-1' } } });
    expect(dir.calls('upsert_note')).toHaveLength(1);
    expect(dir.calls('find_note').map((c) => c.args)).toEqual([{ key: 't:r:3-0' }]);
  });

  it('the server changes a tool schema between a crash and the resume: the run parks naming the pinned schema, nothing substituted', async () => {
    const dir = fixture();
    const before = await connect(dir.stdio());
    const t = await mcpRun(before, [{ calls: [{ name: 'fx_lookup', args: { id: 'a1' } }] }, { text: 'found' }]);
    const pinnedHash = t.agent.pinnedTools.find((p) => p.name === 'fx_lookup')!.schemaHash;
    await crashFirstStep(t, 'after-append:model_response');
    await before.close();
    dir.variant('v2'); // the server is upgraded: lookup now also requires `region`
    const after = await connect(dir.stdio());
    expect(after.server).toBe('fixture@2.0.0');
    const world = coldStart(t.world, t.agent, after);
    const done = await drive(world, t.run);
    expect(done.head.status).toBe('parked');
    expect(done.head.attention[0]).toMatchObject({ reason: 'missing_tool_version' });
    expect(done.head.attention[0]!.detail).toBe(`no implementation registered for tool fx_lookup@fixture@1.0.0 with schema ${pinnedHash.slice(0, 12)}`);
    expect(dir.calls('lookup')).toEqual([]);
    // A run started now pins the new schema.
    const fresh = { tenant: 't', runId: 'r-new' };
    await startRun(spawnWorker(world).deps, { ...fresh, agent: 'agent', input: 'go' });
    const { events } = await logOf(world, fresh);
    const pinned = (events[0] as unknown as { tools: { name: string; inputSchema: { required: string[] } }[] }).tools.find((p) => p.name === 'fx_lookup');
    expect(pinned?.inputSchema.required).toEqual(['id', 'region']);
  });

  it('stdio server killed mid-call, read-only tool: the outcome is unknown, the call is rerun after its deadline on a new server process', async () => {
    const dir = fixture();
    // Longer than the test may take: the call must end when the server dies, not at its timeout.
    const server = await connect(dir.stdio(), { timeoutMs: MUCH_LONGER_THAN_THE_TEST });
    const t = await mcpRun(server, [{ calls: [{ name: 'fx_lookup', args: { id: 'a1' } }] }, { text: 'found' }]);
    dir.hang(true);
    const driving = drive(t.world, t.run);
    const inFlight = await dir.waitForCall('lookup');
    dir.hang(false);
    await killPid(inFlight.pid);
    const done = await driving;
    expect(done.head.status).toBe('completed');
    expect(done.outcomes).toContain('waiting'); // the step ended normally; the policy waited for the deadline
    const { state, types } = await logOf(t.world, t.run);
    expect(state.calls['3-0']).toMatchObject({ attempt: 2, result: { ok: true, output: { kind: 'inline', value: 'item a1' } } });
    expect(types.filter((x) => x === 'tool_started')).toHaveLength(2);
    expect(new Set(dir.calls('lookup').map((c) => c.key))).toEqual(new Set(['t:r:3-0']));
    // One reconnect, to a new server process, and only after the first one died.
    const pids = dir.initializes().map((e) => e.pid);
    expect(pids).toHaveLength(2);
    expect(pids[0]).toBe(inFlight.pid);
    expect(pids[1]).not.toBe(inFlight.pid);
    expect(server.connects).toBe(2);
  });

  it('stdio server killed mid-call, tool without annotations: escalate parks the run for a person, the payment is never retried', async () => {
    const dir = fixture();
    const server = await connect(dir.stdio(), { timeoutMs: MUCH_LONGER_THAN_THE_TEST });
    const t = await mcpRun(server, [{ calls: [{ name: 'fx_send_payment', args: { amountCents: 500 } }] }, { text: 'the payment failed' }]);
    dir.hang(true);
    const driving = drive(t.world, t.run);
    const inFlight = await dir.waitForCall('send_payment');
    dir.hang(false);
    await killPid(inFlight.pid);
    const parked = await driving;
    expect(parked.head.status).toBe('parked');
    expect(parked.head.attention[0]).toMatchObject({ reason: 'unknown_outcome', callId: '3-0' });
    // A person checks the payment provider and answers: it did not go through.
    const resolved = await drive(t.world, t.run, { resolver: (a) => (a.callId ? { callId: a.callId, outcome: 'failed' } : undefined) });
    expect(resolved.head.status).toBe('completed');
    expect(dir.calls('send_payment')).toHaveLength(1);
  });

  it('HTTP server killed mid-call: unknown, rerun after the deadline, and a server that is down by then gives an error result', async () => {
    const dir = fixture();
    const { url, child } = await dir.http();
    // The SDK alone would wait for this timeout: the broken SSE stream must end the call at once.
    const server = await connect({ url }, { timeoutMs: MUCH_LONGER_THAN_THE_TEST });
    const t = await mcpRun(server, [{ calls: [{ name: 'fx_lookup', args: { id: 'a1' } }] }, { text: 'the lookup service is down' }]);
    dir.hang(true);
    const driving = drive(t.world, t.run);
    await dir.waitForCall('lookup');
    await killPid(child.pid!);
    const done = await driving;
    expect(done.head.status).toBe('completed');
    const { state } = await logOf(t.world, t.run);
    expect(state.calls['3-0']).toMatchObject({ attempt: 2, result: { ok: false, errorCode: 'mcp_server_unavailable' } });
    expect(dir.calls('lookup')).toHaveLength(1);
  });

  it('HTTP server restarted between calls: the stale session is replaced transparently; stopped for good: an error result, never a crash', async () => {
    const dir = fixture();
    const first = await dir.http();
    const server = await connect({ url: first.url });
    const script: ScriptStep[] = [{ calls: [{ name: 'fx_lookup', args: { id: 'a1' } }] }, { text: 'ok' }];
    const t = scriptedWorld({ tools: server.tools, script, graceMs: 1_000 });
    const runs = ['r1', 'r2', 'r3'].map((runId) => ({ tenant: 't', runId }));
    const run = async (r: { tenant: string; runId: string }) => {
      await startRun(t.worker.deps, { ...r, agent: 'agent', input: 'go' });
      const done = await drive(t.world, r);
      expect(done.head.status).toBe('completed');
      return (await logOf(t.world, r)).state.calls['3-0']!;
    };
    expect(await run(runs[0]!)).toMatchObject({ attempt: 1, result: { ok: true } });
    await killPid(first.child.pid!);
    const second = await dir.http(first.port); // same address, new process: the old session id means nothing to it
    // Attempt 1: the 404 proved the request unread, so it was sent again on a new session at once.
    expect(await run(runs[1]!)).toMatchObject({ attempt: 1, result: { ok: true, output: { kind: 'inline', value: 'item a1' } } });
    expect(dir.initializes()).toHaveLength(2);
    await killPid(second.child.pid!);
    // Connection refused: provably not sent, so an error result at once (no unknown, no wait).
    expect(await run(runs[2]!)).toMatchObject({ attempt: 1, result: { ok: false, errorCode: 'mcp_server_unavailable' } });
    expect(dir.calls('lookup')).toHaveLength(2);
  });
});

describe('aborts and timeouts', () => {
  it('an engine abort (timeout, cancel, lost lease) cancels the request on the server', async () => {
    const dir = fixture();
    const server = await connect(dir.stdio());
    const lookup = server.tools.find((t) => t.name === 'fx_lookup')!;
    dir.hang(true);
    const ctx = toolTestContext();
    const call = lookup.execute({ id: 'a1' }, ctx);
    await dir.waitForCall('lookup');
    ctx.abort(new Error('cancel'));
    await expect(call).rejects.toThrow('cancel');
    for (let i = 0; i < 200 && !dir.ledger().some((e) => e.ev === 'cancelled'); i++) await new Promise((r) => setTimeout(r, 25));
    expect(dir.ledger().filter((e) => e.ev === 'cancelled')).toEqual([expect.objectContaining({ tool: 'lookup' })]);
    // The connection survives a cancelled call.
    dir.hang(false);
    await expect(lookup.execute({ id: 'a2' }, toolTestContext())).resolves.toBe('item a2');
    expect(server.connects).toBe(1);
  });

  it('a call that outlives its timeout has an unknown outcome (it may still land), never an error result', async () => {
    const dir = fixture();
    const server = await connect(dir.stdio(), { timeoutMs: 300 });
    dir.hang(true);
    const payment = server.tools.find((t) => t.name === 'fx_send_payment')!;
    await expect(payment.execute({ amountCents: 1 }, toolTestContext())).rejects.toBeInstanceOf(ToolOutcomeUnknownError);
  });
});

describe('closing what mcpTools() returns', () => {
  it('close() ends the stdio server: its process is gone when it resolves, later calls are never sent, and the tools stay a plain array', async () => {
    const dir = fixture();
    const tools = await mcpTools({ transport: dir.stdio(), prefix: 'fx_', include: ['lookup'], timeoutMs: 5_000, trustAnnotations: true });
    // What an agent's `tools: [...tools]` and a deep comparison see: the tools, no close().
    expect([...tools].map((t) => t.name)).toEqual(['fx_lookup']);
    expect(Object.keys(tools)).toEqual(['0']);
    expect(JSON.stringify(tools.map((t) => t.name))).toBe('["fx_lookup"]');
    await expect(tools[0]!.execute({ id: 'a1' }, toolTestContext())).resolves.toBe('item a1');
    const pid = dir.initializes()[0]!.pid;
    expect(() => process.kill(pid, 0)).not.toThrow();

    await tools.close();
    expect(() => process.kill(pid, 0)).toThrow(); // gone, not just asked to go
    await expect(tools[0]!.execute({ id: 'a2' }, toolTestContext())).rejects.toBeInstanceOf(McpConnectionClosedError);
    expect(dir.calls('lookup')).toHaveLength(1);
    await tools.close(); // idempotent
    expect(dir.initializes()).toHaveLength(1);
  });
});
