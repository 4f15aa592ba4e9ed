/**
 * A stdio MCP server shipped with a deployed function (LOGBOOK_MCP_MANIFEST, as the CDK construct
 * writes it): mcpTools() builds the same tools from the listing taken at synth time without
 * starting the server, and starts it, rewritten to `node <bundled script>`, at the first call.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectMcpServer, type McpServerTools } from 'logbook';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { pinTool } from '../../lib/authoring/define-agent.js';
import { ConfigError } from '../../lib/core/errors.js';
import { MCP_MANIFEST_ENV, MCP_SOURCE, type McpManifest, type McpToolSource } from '../../lib/tools/mcp/shipped-servers.js';
import { FixtureDir } from '../fixtures/mcp/fixture.js';

const fixture = new FixtureDir();
const dir = mkdtempSync(join(tmpdir(), 'logbook-shipped-'));
const opened: McpServerTools[] = [];
afterEach(() => {
  delete process.env[MCP_MANIFEST_ENV];
});
afterAll(async () => {
  await Promise.all(opened.map((o) => o.close()));
  fixture.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const ENTRY = 'test/fixtures/mcp/fixture-server.ts';
const ctx = { idempotencyKey: 't:r:1-0', fencingToken: 1, signal: new AbortController().signal } as never;

describe('a shipped stdio MCP server', () => {
  it('gives the same pinned tools without starting, and starts at the first call as node <script>', async () => {
    // Synth time: the live listing (what the construct's loader reads from each tool).
    const live = await connectMcpServer({ transport: fixture.stdio(), trustAnnotations: true });
    opened.push(live);
    const source = (live.tools[0] as unknown as Record<symbol, McpToolSource>)[MCP_SOURCE] as McpToolSource;
    expect(source).toMatchObject({ label: `stdio:${process.execPath}`, server: 'fixture@1.0.0', transport: { kind: 'stdio' } });
    expect(live.tools.every((t) => (t as unknown as Record<symbol, unknown>)[MCP_SOURCE] === source)).toBe(true);
    await live.close();
    const initializedAtSynth = fixture.initializes().length;

    // The bundle: a manifest beside the "bundled" server (here the fixture's own bundled file).
    const [script, ...scriptArgs] = fixture.stdio().args ?? [];
    const manifest: McpManifest = {
      version: 1,
      servers: { [`bundle:${ENTRY}`]: { server: source.server, listed: source.listed as Record<string, unknown>[], script: script as string, args: scriptArgs } },
    };
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    process.env[MCP_MANIFEST_ENV] = join(dir, 'manifest.json');

    // Deployed: the command as written would not run (no such file); the shipped one does.
    const transport = { command: 'node', args: ['--import', 'tsx', ENTRY], env: fixture.stdio().env ?? {}, stderr: 'ignore' as const, bundle: { entry: ENTRY } };
    const shipped = await connectMcpServer({ transport, trustAnnotations: true });
    opened.push(shipped);
    expect(shipped.server).toBe('fixture@1.0.0');
    expect(shipped.tools.map(pinTool)).toEqual(live.tools.map(pinTool));
    expect(shipped.connects).toBe(0);
    expect(fixture.initializes()).toHaveLength(initializedAtSynth);

    const lookup = shipped.tools.find((t) => t.name === 'lookup');
    const output = await lookup?.execute({ id: 'a-1' }, ctx);
    expect(output).toBeDefined();
    expect(shipped.connects).toBe(1);
    expect(fixture.initializes()).toHaveLength(initializedAtSynth + 1);
    expect(fixture.calls('lookup').at(-1)).toMatchObject({ mode: 'stdio', args: { id: 'a-1' }, key: 't:r:1-0' });
  });

  it('refuses a bundled server the manifest does not ship, and leaves other servers as they were', async () => {
    writeFileSync(join(dir, 'empty.json'), JSON.stringify({ version: 1, servers: {} }));
    process.env[MCP_MANIFEST_ENV] = join(dir, 'empty.json');
    const missing = connectMcpServer({ transport: { command: 'node', args: ['x.js'], bundle: { entry: 'src/other-server.ts' } } });
    await expect(missing).rejects.toThrow(ConfigError);
    await expect(missing).rejects.toThrow(/src\/other-server\.ts \(transport\.bundle\.entry\) is not in this function's bundle/);
    // A malformed bundle is the application's mistake, refused before anything else.
    for (const bundle of [{ entry: ' ' }, { entry: 'src/s.ts', args: [1] }]) {
      await expect(connectMcpServer({ transport: { command: 'node', bundle } as never })).rejects.toThrow(/mcpTools: transport\.bundle\.(entry|args) must be/);
    }
    // Not in the manifest and not bundled: connected at cold start, as without a manifest.
    const eager = await connectMcpServer({ transport: fixture.stdio() });
    opened.push(eager);
    expect(eager.connects).toBe(1);
  });
});
