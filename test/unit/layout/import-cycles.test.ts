import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importGraph, root, sources } from './import-graph.js';

/**
 * No import circle in lib/, type-only imports included. ESLint's import-x/no-cycle catches value
 * circles on every lint; it skips `import type`, and a type circle is how a value one starts (the
 * seven-file circle this replaced began as types shared between defining and running an agent).
 */

/** Strongly connected components with more than one file (Tarjan). */
export function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('lib/ import graph', () => {
  it('has no circle, counting type-only imports', () => {
    const found = circles(importGraph(sources(join(root, 'lib')))).map((c) => c.map((f) => relative(root, f)).sort());
    expect(found).toEqual([]);
  });

  it('finds a circle made of type imports (the check itself works)', () => {
    const a = join(root, 'lib/a.ts');
    const b = join(root, 'lib/b.ts');
    const graph = new Map([
      [a, [b]],
      [b, [a]],
    ]);
    expect(circles(graph)).toHaveLength(1);
  });

  it('keeps the authoring API apart from the engine run-time', () => {
    const graph = importGraph(sources(join(root, 'lib')));
    const authoring = [...graph].filter(([f]) => relative(root, f).startsWith('lib/authoring/'));
    expect(authoring.length).toBeGreaterThan(3);
    const engineDeps = authoring.flatMap(([f, deps]) =>
      deps.filter((d) => relative(root, d).startsWith('lib/engine/')).map((d) => `${relative(root, f)} -> ${relative(root, d)}`),
    );
    expect(engineDeps).toEqual([]);
  });
});
