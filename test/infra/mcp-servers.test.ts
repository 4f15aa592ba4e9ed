/**
 * The construct and stdio MCP servers, synthesized without bundling (the bundles themselves run in
 * test/e2e/deployed-mcp.test.ts): a server with `transport.bundle` is bundled and staged with its
 * tool listing for the worker, the API and the trigger get the listing's manifest; a server with
 * no `bundle` refuses synth naming the agent, the server's tools and the missing script.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Template } from 'aws-cdk-lib/assertions';
import { Logbook } from 'logbook/cdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { generatedEntryDir } from '../../lib/cdk/agents-module.js';
import { McpServerBundleError, McpServerNotShippedError } from '../../lib/cdk/errors.js';
import { missingOf, shipMcpServers } from '../../lib/cdk/mcp-servers.js';
import type { McpManifest, McpToolSource } from '../../lib/tools/mcp/shipped-servers.js';
import { userApp } from './user-app.js';

const ROOT = process.cwd();
const EXAMPLE = 'examples/mcp-agent/agents.ts';
const UNSHIPPED = 'test/fixtures/apps/mcp-unshipped/agents.ts';

function envOf(template: Template, service: string): Record<string, unknown> {
  const fns = Object.values(template.findResources('AWS::Lambda::Function')) as { Properties: { Environment: { Variables: Record<string, unknown> } } }[];
  const fn = fns.find((f) => f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME === service);
  if (!fn) throw new Error(`no ${service} function`);
  return fn.Properties.Environment.Variables;
}

describe('a stdio MCP server with transport.bundle (the MCP example)', () => {
  let template: Template;
  beforeAll(() => {
    const u = userApp();
    new Logbook(u.stack, 'Agents', { agents: EXAMPLE });
    ({ template } = u.synth());
  }, 120_000);

  it('points the worker, the API and the trigger at the shipped manifest; the sweeper runs no agent code', () => {
    for (const service of ['logbook-worker', 'logbook-api', 'logbook-trigger']) {
      expect(envOf(template, service).LOGBOOK_MCP_MANIFEST, service).toBe('logbook-mcp/manifest.json');
    }
    expect(envOf(template, 'logbook-sweeper')).not.toHaveProperty('LOGBOOK_MCP_MANIFEST');
  });

  it('stages the bundled server and its synth-time tool listing, filed under the entry as written', () => {
    const staging = generatedEntryDir(ROOT, join(ROOT, EXAMPLE));
    const dirs = readdirSync(staging).filter((d) => /^mcp-[0-9a-f]{16}$/.test(d));
    expect(dirs.length).toBeGreaterThan(0);
    const manifests = dirs.map((d) => JSON.parse(readFileSync(join(staging, d, 'manifest.json'), 'utf8')) as McpManifest);
    const manifest = manifests.find((m) => m.servers['bundle:examples/mcp-agent/warehouse-server.ts']);
    const entry = manifest?.servers['bundle:examples/mcp-agent/warehouse-server.ts'];
    expect(entry).toMatchObject({ server: 'warehouse@1.0.0', script: expect.stringMatching(/^servers\/.*warehouse-server-ts-[0-9a-f]{8}\.mjs$/) });
    expect(entry?.listed.map((t) => t.name)).toEqual(['find_item', 'reserve_item', 'ship_order']);
    const dir = dirs.find((d, i) => manifests[i] === manifest) as string;
    const bundled = readFileSync(join(staging, dir, entry?.script as string), 'utf8');
    // One self-contained file: the SDK's server and zod inside, no import but Node's own.
    expect(bundled).toContain('reserve_item');
    expect([...bundled.matchAll(/\bfrom\s*["']([^"']+)["']/g)].map((m) => m[1]).filter((s) => !s?.startsWith('node:'))).toEqual([]);
  });
});

describe('a stdio MCP server the worker would not have', () => {
  it('refuses synth naming the agent, the tools, the server and the missing script', () => {
    const u = userApp();
    let error: unknown;
    try {
      new Logbook(u.stack, 'Agents', { agents: UNSHIPPED });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(McpServerNotShippedError);
    const e = error as McpServerNotShippedError;
    expect(e.code).toBe('mcp_server_not_shipped');
    expect(e.agents).toEqual(['unshipped@1.0.0']);
    expect(e.tools).toEqual(['wh_find_item']);
    expect(e.server).toBe(`stdio:${process.execPath}`);
    expect(e.missing).toBe('its script examples/mcp-agent/warehouse-server.ts');
    expect(e.message).toMatch(/agent unshipped@1\.0\.0 uses wh_find_item from the stdio MCP server stdio:.*its script examples\/mcp-agent\/warehouse-server\.ts is not shipped/);
    expect(e.message).toContain("bundle: { entry: '");
  }, 120_000);

  it('names what is missing for each kind of command', () => {
    expect(missingOf('node', ['--enable-source-maps', '-r', 'dotenv/config', 'dist/server.js'], ROOT)).toBe('its script dist/server.js');
    expect(missingOf(process.execPath, ['--import', 'tsx', join(ROOT, 'src/server.ts')], ROOT)).toBe('its script src/server.ts');
    expect(missingOf('npx', ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], ROOT)).toMatch(/^the package @modelcontextprotocol\/server-filesystem \(npx fetches it/);
    expect(missingOf('python3', ['server.py'], ROOT)).toBe('its command python3');
    expect(missingOf('/opt/bin/mcp-server', [], ROOT)).toBe('its command /opt/bin/mcp-server');
  });

  it('an entry esbuild cannot bundle is a synth error naming it and the agent; HTTP and bundle:false servers are not bundled', () => {
    const stdio = (bundle: { entry: string } | false): McpToolSource => ({
      key: bundle ? `bundle:${bundle.entry}` : 'stdio:["/opt/bin/s"]',
      label: 'stdio:node',
      server: 's@1',
      version: 's@1',
      transport: { kind: 'stdio', command: 'node', args: [], bundle },
      listed: [{ name: 't', inputSchema: { type: 'object' } }],
    });
    const uses = [{ agent: 'a@1', tool: 't', source: 0 }];
    const stagingRoot = generatedEntryDir(ROOT, join(ROOT, UNSHIPPED));
    expect(() => shipMcpServers({ sources: [stdio({ entry: 'src/no-such-server.ts' })], uses }, { projectRoot: ROOT, stagingRoot })).toThrow(McpServerBundleError);
    expect(() => shipMcpServers({ sources: [stdio({ entry: 'src/no-such-server.ts' })], uses }, { projectRoot: ROOT, stagingRoot })).toThrow(
      /bundle\.entry src\/no-such-server\.ts \(used by agent a@1\) could not be bundled: Could not resolve/,
    );
    const http: McpToolSource = { key: undefined, label: 'https://mcp.example/mcp', server: 'h@1', version: 'h@1', transport: { kind: 'http' }, listed: [] };
    expect(shipMcpServers({ sources: [http], uses }, { projectRoot: ROOT, stagingRoot })).toBeUndefined();
    const provided = shipMcpServers({ sources: [stdio(false)], uses }, { projectRoot: ROOT, stagingRoot });
    const manifest = JSON.parse(readFileSync(provided?.manifest as string, 'utf8')) as McpManifest;
    expect(manifest.servers['stdio:["/opt/bin/s"]']).toEqual({ server: 's@1', version: 's@1', listed: [{ name: 't', inputSchema: { type: 'object' } }] });
    expect(existsSync(join(provided?.dir as string, 'servers'))).toBe(true);
  });
});
