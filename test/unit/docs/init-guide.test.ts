// The getting-started guide's table of what `logbook init` writes is the template, file for file:
// moving the template's handlers or CDK app fails here until the guide says where they went.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const TEMPLATE = 'templates/project';
const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

function templateFiles(dir = TEMPLATE): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? templateFiles(join(dir, e.name)) : [relative(TEMPLATE, join(dir, e.name))]));
}

describe('docs/guides/getting-started.md', () => {
  it('lists every source file and the CDK and README files that `logbook init` writes, the packed logbook, and no other', () => {
    const guide = readFileSync('docs/guides/getting-started.md', 'utf8');
    const section = guide.slice(guide.indexOf('## What `logbook init` writes'), guide.indexOf('A session with it'));
    const listed = [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!).sort();
    const written = [...templateFiles().filter((f) => f.endsWith('.ts') || f === 'cdk.json' || f === 'README.md'), `vendor/logbook-${version}.tgz`].sort();
    expect(written.length).toBeGreaterThan(5);
    expect(listed).toEqual(written);
  });
});
