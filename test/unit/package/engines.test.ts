/**
 * The Node versions the package, a project `logbook init` writes and this repository say they need
 * are what their dependencies need, by the `engines` every package-lock.json entry records: the
 * published package's dependencies (the lock's non-dev entries) run on its `engines.node`, and
 * everything installed here, which includes every package the template pins, runs on the
 * template's and on DEVELOPMENT.md's. A dependency upgrade that needs a newer Node fails here.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
const manifest = JSON.parse(read('package.json')) as { engines: { node: string } };
const template = JSON.parse(read('templates/project/_package.json')) as { engines: { node: string } };
const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string; dev?: boolean; engines?: { node?: string } | string[] }> };

/** Lock entries (by path) whose own `engines.node` the given Node version does not satisfy. */
function refusing(version: string, include: (entry: { dev?: boolean }) => boolean): string[] {
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && include(entry))
    .flatMap(([path, entry]) => {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      return range && !semver.satisfies(version, range) ? [`${path}@${entry.version}: node ${range}`] : [];
    });
}

/** The oldest version of each line a range accepts: `^20.11.0 || ^22.0.0` → 20.11.0, 22.0.0. */
const oldest = (range: string) => range.split('||').map((line) => semver.minVersion(line.trim())!.version);

describe('engines', () => {
  it("the package's dependencies all run on the oldest Node of each line its engines field accepts", () => {
    expect(oldest(manifest.engines.node)).toEqual(['20.11.0', '22.0.0']);
    for (const node of oldest(manifest.engines.node)) expect(refusing(node, (e) => e.dev !== true), node).toEqual([]);
  });

  it("light-my-request (fauxqs's fastify) gets a cookie that runs on Node 20, not cookie 2 (Node 22)", () => {
    expect(lock.packages['node_modules/light-my-request/node_modules/cookie']?.version).toBe('1.1.1');
  });

  it("a project `logbook init` writes, and this repository's development, state a Node every installed package runs on", () => {
    for (const node of oldest(template.engines.node)) expect(refusing(node, () => true), node).toEqual([]);
    // DEVELOPMENT.md states the template's range for development.
    expect(read('DEVELOPMENT.md')).toContain(`\`${template.engines.node}\` (the template's \`engines\`)`);
    // The template asks no more than the dependencies need: one minor lower on each line would be refused.
    for (const node of oldest(template.engines.node)) {
      const [major, minor] = node.split('.').map(Number) as [number, number];
      expect(refusing(`${major}.${minor - 1}.0`, () => true).length, node).toBeGreaterThan(0);
    }
  });
});
