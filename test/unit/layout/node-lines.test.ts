import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string) => readFileSync(`${ROOT}${path}`, 'utf8');
const engines = (path: string) => (JSON.parse(read(path)) as { engines: { node: string } }).engines.node;
const ci = read('.ci/run');
const pinned = (name: string) => /^\w+=(\S+)$/m.exec(ci.split('\n').find((l) => l.startsWith(`${name}=`)) ?? '')?.[1] ?? '';

/** `^a.b.c || ^d.e.f`: the caret ranges engines uses, read without a semver library. */
function satisfies(version: string, range: string): boolean {
  const [major, minor, patch] = version.replace(/^v/, '').split('.').map(Number) as [number, number, number];
  return range.split('||').some((alt) => {
    const m = /^\s*\^(\d+)\.(\d+)\.(\d+)\s*$/.exec(alt);
    if (!m) throw new Error(`engines: "${alt}" is not a caret range`);
    const [a, b, c] = [Number(m[1]), Number(m[2]), Number(m[3])];
    return major === a && (minor > b || (minor === b && patch >= c));
  });
}

describe('the Node lines Logbook supports are the ones CI runs', () => {
  it('engines names Node 20 (from 20.11) and 22, in the package and (no lower) in the project logbook init writes', () => {
    expect(engines('package.json')).toBe('^20.11.0 || ^22.0.0');
    // The project init writes runs vite, whose floor is higher within each line: same lines, each floor at least the package's.
    const template = engines('templates/project/_package.json');
    expect(template.split('||').map((alt) => alt.trim().replace(/^\^(\d+)\..*$/, '$1'))).toEqual(['20', '22']);
    expect(template.split('||').map((alt) => satisfies(alt.trim().slice(1), engines('package.json')))).toEqual([true, true]);
    expect(['20.11.0', '20.20.2', '22.0.0', '22.23.3'].map((v) => satisfies(v, engines('package.json')))).toEqual([true, true, true, true]);
    expect(['20.10.0', '21.7.0', '23.0.0', '24.1.0'].map((v) => satisfies(v, engines('package.json')))).toEqual([false, false, false, false]);
  });

  it('.ci/run pins a version of each line that engines takes, and runs the second line on test folders that exist', () => {
    const versions = [pinned('NODE20_VERSION'), pinned('NODE22_VERSION')];
    expect(versions.map((v) => [v.split('.')[0], satisfies(v, engines('package.json'))])).toEqual([
      ['20', true],
      ['22', true],
    ]);
    expect(satisfies(process.version, engines('package.json'))).toBe(true);
    const tests = /^SECOND_NODE_TESTS=\(([^)]*)\)/m.exec(ci)?.[1]?.split(/\s+/).filter(Boolean) ?? [];
    expect(tests.length).toBeGreaterThan(0);
    expect(tests.filter((t) => !existsSync(`${ROOT}${t}`))).toEqual([]);
  });
});
