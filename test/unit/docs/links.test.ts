/**
 * The README's links into docs/ work where the README is read: on the repository and in the
 * installed package. Every relative link of the README and of the pages under docs/ resolves to a
 * file (and a `#fragment` to a heading of it), and every docs page the README links to is in the
 * file list `npm pack` would publish.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function markdownFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

/** Relative link targets of a page (outside code blocks), as repository paths with their fragment. */
function links(page: string): { target: string; fragment: string | undefined; text: string }[] {
  const text = readFileSync(join(ROOT, page), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((href) => !/^[a-z]+:/i.test(href))
    .map((href) => {
      const [path, fragment] = href.split('#') as [string, string | undefined];
      return { target: path === '' ? page : normalize(join(dirname(page), path)), fragment, text: href };
    });
}

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

function anchors(page: string): Set<string> {
  const text = readFileSync(join(ROOT, page), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

const PAGES = ['README.md', 'DEVELOPMENT.md', ...markdownFiles('docs')];

describe('links in the README and docs/', () => {
  it.each(PAGES)('%s: every relative link resolves, to a heading when it names one', (page) => {
    const broken = links(page).flatMap(({ target, fragment, text }) => {
      if (!existsSync(join(ROOT, target))) return [`${text}: no file ${target}`];
      if (fragment && target.endsWith('.md') && !anchors(target).has(fragment)) return [`${text}: no heading #${fragment} in ${target}`];
      return [];
    });
    expect(broken).toEqual([]);
  });

  it('every docs page the README links to ships in the package', () => {
    const [pack] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }),
    ) as [{ files: { path: string }[] }];
    const packed = new Set(pack.files.map((f) => f.path));
    const docs = [...new Set(links('README.md').map((l) => l.target))].filter((t) => t.startsWith(`docs/`));
    expect(docs.length).toBeGreaterThanOrEqual(8);
    expect(docs.filter((t) => !packed.has(t))).toEqual([]);
    // The pages those link to in turn (one level: guides link to reference pages and concepts).
    const second = docs.flatMap((d) => links(d).map((l) => l.target)).filter((t) => t.startsWith('docs/') && t.endsWith('.md'));
    expect(second.filter((t) => !packed.has(t))).toEqual([]);
  });
});
