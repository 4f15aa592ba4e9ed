/**
 * The README's "Your own agent" commands, checked for what makes them work from a fresh clone
 * (test/e2e/packaged-app.test.ts runs them): the clone is installed before init runs its CLI, the
 * project goes outside the clone (inside it, `logbook` and every package would resolve from the
 * clone's node_modules), and the getting-started guide shows the same commands.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ownAgentCommands, sectionCommands, shellWords } from '../../fixtures/readme-commands.js';

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
const readme = read('README.md');

describe("the README's own-agent commands", () => {
  const own = ownAgentCommands(readme);

  it('install the clone, then init a project outside it with the CLI the clone provides', () => {
    expect(own.inClone).toEqual([['npm', 'install']]);
    expect(own.dir.startsWith('../')).toBe(true);
    // `npx logbook` inside the clone runs the clone's own bin (package name and bin both `logbook`).
    const manifest = JSON.parse(read('package.json')) as { name: string; bin: Record<string, string> };
    if (own.init[0] === 'npx') {
      expect(manifest.name).toBe('logbook');
      expect(manifest.bin.logbook).toBe('bin/logbook.js');
    }
    // The default dependency (the packed clone) is what the README promises, so no --logbook is needed.
    expect(own.init).not.toContain('--logbook');
  });

  it('then install, run, start a run, test and deploy in the project', () => {
    expect(own.inProject.map((c) => c.slice(0, 3).join(' '))).toEqual(['npm install', 'npm run dev', 'npx logbook runs', 'npm test', 'npx cdk deploy']);
    expect(own.inProject[2]).toEqual(['npx', 'logbook', 'runs', 'start', 'ops', '--input', 'checkout is returning 500s']);
  });

  it('are the commands the getting-started guide shows', () => {
    expect(sectionCommands(read('docs/guides/getting-started.md'), '## Five commands')).toEqual(sectionCommands(readme, '## Your own agent'));
  });

  it('are split as a shell splits them', () => {
    expect(shellWords(`npx logbook runs start ops --input 'a "b" # c'`)).toEqual(['npx', 'logbook', 'runs', 'start', 'ops', '--input', 'a "b" # c']);
    expect(shellWords(`echo "it's" ''`)).toEqual(['echo', "it's", '']);
    expect(() => shellWords(`echo 'open`)).toThrow(/unclosed/);
    expect(sectionCommands("x\n## S\n```sh\na && b  # c 'd\n# only\ne '#f'\n```\n", '## S')).toEqual([[['a'], ['b']], [['e', '#f']]]);
  });
});
