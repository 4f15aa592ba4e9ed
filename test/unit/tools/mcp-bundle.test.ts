import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/** Bundle a one-line entry the way the CDK construct does (ESM, tree shaking, source condition). */
async function bundle(contents: string) {
  const result = await build({
    stdin: { contents, resolveDir: process.cwd(), loader: 'ts' },
    bundle: true,
    write: false,
    metafile: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    conditions: ['logbook-source'],
    mainFields: ['module', 'main'],
    logLevel: 'silent',
  });
  // Files that put code in the output (the metafile's top-level inputs also list what was shaken out).
  const inputs = Object.values(result.metafile.outputs).flatMap((o) => Object.entries(o.inputs).filter(([, i]) => i.bytesInOutput > 0).map(([path]) => path));
  const bytes = result.outputFiles.reduce((n, f) => n + f.contents.byteLength, 0);
  return { inputs, bytes, from: (pkg: string) => inputs.filter((i) => i.includes(`node_modules/${pkg}/`)).length };
}

describe('what MCP support costs an application that does not use it', () => {
  it('nothing: an agents module importing `logbook` without mcpTools bundles neither the MCP SDK nor Ajv', async () => {
    const without = await bundle(`import { defineAgent, defineAgents, defineTool } from 'logbook'; export const x = [defineAgent, defineAgents, defineTool];`);
    const withMcp = await bundle(`import { defineAgent, defineAgents, defineTool, mcpTools } from 'logbook'; export const x = [defineAgent, defineAgents, defineTool, mcpTools];`);
    expect(without.from('@modelcontextprotocol/sdk')).toBe(0);
    expect(without.from('ajv')).toBe(0);
    expect(withMcp.from('@modelcontextprotocol/sdk')).toBeGreaterThan(0);
    expect(withMcp.from('ajv')).toBeGreaterThan(0);
    // The server side of the SDK (McpServer, its transports, Express, Hono's node adapter) stays out.
    expect(withMcp.from('express')).toBe(0);
    expect(withMcp.from('@hono/node-server')).toBe(0);
    expect(withMcp.inputs.filter((i) => /sdk\/dist\/esm\/server\/(mcp|index|stdio|streamableHttp|express)\.js$/.test(i))).toEqual([]);
    console.info(`bundle bytes (minified): without mcpTools ${without.bytes}, with mcpTools ${withMcp.bytes}`);
  });
});
