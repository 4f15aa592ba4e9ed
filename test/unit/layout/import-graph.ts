import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root, for the layout checks. */
export const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Every TypeScript source under `dir` (declaration files aside). */
export function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Static imports and re-exports with a relative specifier (dynamic import() loads lazily: no circle). */
export function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const known = new Set(files);
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const deps = [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*'(\.[^']+)'/gms)]
      .map((m) => normalize(join(dirname(file), (m[1] ?? '').replace(/\.js$/, '.ts'))))
      .filter((dep) => known.has(dep));
    graph.set(file, deps);
  }
  return graph;
}
