import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importGraph, root, sources } from './import-graph.js';

/**
 * lib/'s directories in layers, lowest first. A file imports its own directory and the layers below
 * its own, never one beside or above it (a back-arrow), type-only imports included. Shared numbers
 * are in core/limits.ts and helpers on node built-ins in support/, so no layer needs one above it.
 */
const LAYERS: readonly (readonly string[])[] = [
  // logbook/chat, browser code that imports nothing of lib/: the API imports its wire types.
  ['chat'],
  ['core'],
  ['ports'],
  ['support'],
  ['models', 'adapters'],
  ['authoring'],
  ['engine', 'tools'],
  ['api', 'testing'],
  ['lambda'],
  ['cdk', 'index'],
];

/** Adapters are built only by the Lambda wiring, the CDK app and the testing kit (and outside lib/). */
const ADAPTER_IMPORTERS = new Set(['adapters', 'lambda', 'cdk', 'testing']);

/** The directory of lib/ a file belongs to (`index` for lib/index.ts). */
function area(file: string): string {
  const parts = relative(join(root, 'lib'), file).split('/');
  return parts.length === 1 ? 'index' : (parts[0] ?? '');
}

function rank(name: string): number {
  return LAYERS.findIndex((layer) => layer.includes(name));
}

export function backArrows(graph: Map<string, string[]>): string[] {
  return [...graph].flatMap(([file, deps]) =>
    deps.filter((dep) => area(dep) !== area(file) && rank(area(dep)) >= rank(area(file))).map((dep) => `${relative(root, file)} -> ${relative(root, dep)}`),
  );
}

export function adapterImports(graph: Map<string, string[]>): string[] {
  return [...graph].flatMap(([file, deps]) =>
    deps.filter((dep) => area(dep) === 'adapters' && !ADAPTER_IMPORTERS.has(area(file))).map((dep) => `${relative(root, file)} -> ${relative(root, dep)}`),
  );
}

describe('lib/ layers', () => {
  const graph = importGraph(sources(join(root, 'lib')));

  it('places every directory of lib/ in a layer', () => {
    const dirs = readdirSync(join(root, 'lib'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(dirs.filter((d) => rank(d) < 0)).toEqual([]);
  });

  it('has no back-arrow: every import goes to its own directory or a lower layer', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(backArrows(graph)).toEqual([]);
  });

  it('imports adapters only from lambda, cdk and testing (engine, authoring and models go through ports)', () => {
    expect(adapterImports(graph)).toEqual([]);
  });

  it('finds a back-arrow and an adapter import (the checks themselves work)', () => {
    const f = (p: string) => join(root, 'lib', p);
    const made = new Map([
      [f('authoring/define-tool.ts'), [f('engine/limits.ts')]],
      [f('engine/run-loader.ts'), [f('adapters/system/crypto.ts'), f('core/fold.ts')]],
      [f('models/ai-sdk-model.ts'), [f('adapters/system/system-clock.ts')]],
      [f('lambda/wiring.ts'), [f('adapters/aws/dynamo-store.ts')]],
    ]);
    expect(backArrows(made)).toEqual([
      'lib/authoring/define-tool.ts -> lib/engine/limits.ts',
      'lib/models/ai-sdk-model.ts -> lib/adapters/system/system-clock.ts',
    ]);
    expect(adapterImports(made)).toEqual([
      'lib/engine/run-loader.ts -> lib/adapters/system/crypto.ts',
      'lib/models/ai-sdk-model.ts -> lib/adapters/system/system-clock.ts',
    ]);
  });
});
