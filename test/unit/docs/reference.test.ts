// Each entry point has one reference page, and the page names every export of that entry point
// (values and types), so an export cannot be added without its documentation.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const ENTRY_POINTS = [
  { specifier: 'logbook', source: 'lib/index.ts', page: 'docs/reference/logbook.md' },
  { specifier: 'logbook/engine', source: 'lib/engine/index.ts', page: 'docs/reference/engine.md' },
  { specifier: 'logbook/lambda', source: 'lib/lambda/index.ts', page: 'docs/reference/lambda.md' },
  { specifier: 'logbook/cdk', source: 'lib/cdk/index.ts', page: 'docs/reference/cdk.md' },
  { specifier: 'logbook/testing', source: 'lib/testing/index.ts', page: 'docs/reference/testing.md' },
  { specifier: 'logbook/chat', source: 'lib/chat/index.ts', page: 'docs/reference/chat.md' },
  { specifier: 'logbook/local', source: 'dev/index.ts', page: 'docs/reference/local.md' },
];

const stripComments = (src: string) => src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

/** Every name a module exports, following `export * from` into the files it names. */
function exportedNames(file: string): Set<string> {
  const src = stripComments(readFileSync(join(ROOT, file), 'utf8'));
  const names = new Set<string>();
  for (const m of src.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const part of (m[1] ?? '').split(',')) {
      const spec = part.trim().replace(/^type\s+/, '');
      if (!spec) continue;
      const [name, alias] = spec.split(/\s+as\s+/);
      names.add((alias ?? name ?? '').trim());
    }
  }
  for (const m of src.matchAll(/export\s+(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:function|const|class|interface|type)\s+([A-Za-z0-9_]+)/g)) {
    names.add(m[1] ?? '');
  }
  for (const m of src.matchAll(/export\s+\*\s+from\s+'([^']+)'/g)) {
    const target = join(dirname(file), (m[1] ?? '').replace(/\.js$/, '.ts'));
    for (const n of exportedNames(target)) names.add(n);
  }
  names.delete('');
  return names;
}

describe('reference pages', () => {
  it.each(ENTRY_POINTS)('$page names every export of $specifier', ({ source, page }) => {
    const text = readFileSync(join(ROOT, page), 'utf8');
    const names = [...exportedNames(source)];
    expect(names.length).toBeGreaterThan(5);
    const missing = names.filter((n) => !new RegExp(`\`${n}[\`(<.\\s]`).test(text));
    expect(missing, `${page} does not document: ${missing.join(', ')}`).toEqual([]);
  });

  it('package.json exports exactly these entry points (plus package.json)', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    const subpaths = Object.keys(pkg.exports).filter((k) => k !== './package.json');
    expect(subpaths.sort()).toEqual(ENTRY_POINTS.map((e) => (e.specifier === 'logbook' ? '.' : `./${e.specifier.slice('logbook/'.length)}`)).sort());
  });
});
