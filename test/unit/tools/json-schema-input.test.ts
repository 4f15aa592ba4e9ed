import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../lib/core/errors.js';
import { toolSchemaHash } from '../../../lib/authoring/define-agent.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { jsonSchemaInput } from '../../../lib/tools/json-schema.js';
import { logOf } from '../engine/helpers.js';

const draft07 = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: { to: { type: 'string', format: 'email' }, lines: { type: 'array', items: { $ref: '#/definitions/line' } } },
  required: ['to'],
  additionalProperties: false,
  definitions: { line: { type: 'object', properties: { qty: { type: 'integer', minimum: 1 } }, required: ['qty'] } },
};

describe('jsonSchemaInput (Ajv)', () => {
  it('reports each problem with the path the model must fix, never coercing', () => {
    const input = jsonSchemaInput(draft07, 'test');
    expect(input.validate({ to: 'a@example.com', lines: [{ qty: 2 }] })).toEqual({ ok: true, value: { to: 'a@example.com', lines: [{ qty: 2 }] } });
    const bad = input.validate({ to: 'not-an-email', lines: [{ qty: '2' }, {}], extra: 1 });
    expect(bad.ok).toBe(false);
    const issues = bad.ok ? [] : bad.issues;
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: ['to'], message: 'must match format "email"' },
        { path: ['lines', 0, 'qty'], message: 'must be integer' },
        { path: ['lines', 1, 'qty'], message: 'is required' },
        { path: ['extra'], message: 'is not an allowed property' },
      ]),
    );
    expect(input.validate({ lines: [] })).toMatchObject({ ok: false, issues: [{ path: ['to'], message: 'is required' }] });
  });

  it('follows $schema: 2020-12 (also the default without one) knows prefixItems and $defs', () => {
    const schema = { type: 'object', properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { $ref: '#/$defs/n' }], items: false } }, $defs: { n: { type: 'number' } } };
    const input = jsonSchemaInput(schema, 'test');
    expect(input.validate({ pair: ['a', 1] }).ok).toBe(true);
    expect(input.validate({ pair: ['a', 'b'] })).toMatchObject({ ok: false, issues: [{ path: ['pair', 1] }] });
    expect(input.validate({ pair: ['a', 1, 2] }).ok).toBe(false);
  });

  it('tolerates keywords it does not know (servers emit all sorts), but a schema it cannot compile is a ConfigError naming the tool', () => {
    expect(jsonSchemaInput({ type: 'object', 'x-vendor': true, properties: { a: { type: 'string', examples: ['x'] } } }, 'test').validate({ a: 'x' }).ok).toBe(true);
    expect(() => jsonSchemaInput({ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } }, 'MCP server s: tool t')).toThrow(ConfigError);
    expect(() => jsonSchemaInput({ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } }, 'MCP server s: tool t')).toThrow(/tool t: its input schema cannot be compiled/);
  });
});

describe('defineTool with a JSON Schema input', () => {
  const schema = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
  const weather = (s: Record<string, unknown>, seen: unknown[] = []) =>
    defineTool({
      name: 'weather',
      version: 'srv@1',
      description: 'weather',
      input: jsonSchemaInput(s, 'weather'),
      policy: 'rerun',
      execute: async (args) => {
        seen.push(args);
        return `sunny in ${String(args.city)}`;
      },
    });

  it('pins the schema as given (without the dialect marker, as for zod tools), and a changed schema is a different contract', () => {
    const tool = weather(schema);
    expect(tool.inputSchema).toEqual({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });
    const changed = weather({ ...schema, required: ['city', 'units'], properties: { ...schema.properties, units: { type: 'string' } } });
    expect(toolSchemaHash(changed)).not.toBe(toolSchemaHash(tool));
    // Key order on the wire does not matter: the hash is over canonical JSON.
    const reordered = weather({ required: ['city'], properties: { city: { type: 'string' } }, type: 'object' });
    expect(toolSchemaHash(reordered)).toBe(toolSchemaHash(tool));
  });

  it('the engine validates the model arguments against it: invalid ones are an error result with the path, and the tool never runs', async () => {
    const seen: unknown[] = [];
    const t = scriptedWorld({
      tools: [weather(schema, seen)],
      script: [{ calls: [{ name: 'weather', args: { town: 'Oslo' } }, { name: 'weather', args: { city: 'Oslo' } }] }, { text: 'ok' }],
    });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const done = await driveRun(t.world, t.run, { worker: () => t.worker });
    expect(done.head.status).toBe('completed');
    const { state } = await logOf(t.world, t.run);
    expect(state.calls['3-0']!.result).toMatchObject({ ok: false, errorCode: 'invalid_arguments', source: 'validation' });
    expect(JSON.stringify(state.calls['3-0']!.result?.output)).toContain("weather's schema: city: is required");
    expect(state.calls['3-1']!.result).toMatchObject({ ok: true, output: { kind: 'inline', value: 'sunny in Oslo' } });
    expect(seen).toEqual([{ city: 'Oslo' }]);
  });
});
