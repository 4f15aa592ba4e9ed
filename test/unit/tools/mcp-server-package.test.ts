// Which version an MCP server's tools are pinned under: the installed package the server runs
// from, when Logbook starts it from one, else what the server says (lib/tools/mcp/server-package.ts).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serverPackage } from '../../../lib/tools/mcp/server-package.js';

const ROOT = process.cwd();
const sdk = (JSON.parse(readFileSync(join(ROOT, 'node_modules/@modelcontextprotocol/sdk/package.json'), 'utf8')) as { version: string }).version;
const EXAMPLE = 'node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/mcpServerOutputSchema.js';
const tmp = mkdtempSync(join(tmpdir(), 'logbook-server-package-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('serverPackage', () => {
  it("names the installed package a node-like command's script is in, past package.json files that only set a type", () => {
    // dist/esm/package.json is {"type": "module"}: not the package's manifest.
    expect(serverPackage({ command: 'node', args: [EXAMPLE] })).toBe(`@modelcontextprotocol/sdk@${sdk}`);
    expect(serverPackage({ command: process.execPath, args: ['--enable-source-maps', '-r', 'dotenv/config', join(ROOT, EXAMPLE)] })).toBe(`@modelcontextprotocol/sdk@${sdk}`);
    expect(serverPackage({ command: 'tsx', args: [EXAMPLE.replace('node_modules/', '')], cwd: 'node_modules' })).toBe(`@modelcontextprotocol/sdk@${sdk}`);
  });

  it('reads a bundle entry first, as a path or as a package specifier resolved from the working directory', () => {
    expect(serverPackage({ command: 'node', args: ['src/mine.js'], bundle: { entry: '@modelcontextprotocol/sdk/examples/server/mcpServerOutputSchema.js' } })).toBe(
      `@modelcontextprotocol/sdk@${sdk}`,
    );
    expect(serverPackage({ command: 'node', args: [EXAMPLE], bundle: { entry: 'test/fixtures/mcp/fixture-server.ts' } })).toBeUndefined();
  });

  it("is undefined for what the server's own word must name: HTTP, the application's own script, a launcher or a binary", () => {
    expect(serverPackage({ url: 'http://127.0.0.1:1/mcp' })).toBeUndefined();
    expect(serverPackage({ command: 'node', args: ['test/fixtures/mcp/fixture-server.ts'] })).toBeUndefined();
    expect(serverPackage({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] })).toBeUndefined();
    expect(serverPackage({ command: 'python3', args: ['server.py'] })).toBeUndefined();
    expect(serverPackage({ command: 'node', args: ['no/such/file.js'] })).toBeUndefined();
    // Inside node_modules but in no package with a name and a version.
    mkdirSync(join(tmp, 'node_modules', 'loose'), { recursive: true });
    writeFileSync(join(tmp, 'node_modules', 'loose', 'server.js'), '');
    expect(serverPackage({ command: 'node', args: ['node_modules/loose/server.js'] }, tmp)).toBeUndefined();
    writeFileSync(join(tmp, 'node_modules', 'loose', 'package.json'), JSON.stringify({ name: 'loose', version: '2.1.0' }));
    expect(serverPackage({ command: 'node', args: ['node_modules/loose/server.js'] }, tmp)).toBe('loose@2.1.0');
  });
});
