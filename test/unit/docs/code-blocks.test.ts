/**
 * The ```ts blocks of the README, of every page under docs/ and of the examples' READMEs compile against the package as it is
 * now: each block is written as a file under .scratch/ inside the repository (so `logbook`,
 * `logbook/lambda`... resolve through package.json "exports" like a user's import, and `zod` from
 * node_modules) and typechecked with the repository's compiler options. A renamed or removed
 * export, or a changed signature, fails here naming the page and the block's line.
 *
 * A block whose first line is a path comment (`// src/agents.ts`, `// functions/worker.ts: ...`)
 * is written at that path, so blocks of one page can import each other (`../src/agents.js`). A
 * page that imports an agents module without showing one gets a stub `src/agents.ts`.
 * ```tsx blocks (a React page using logbook/chat) compile the same way, as .tsx with the DOM
 * library and React's JSX.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WORK = join(ROOT, '.scratch', `doc-blocks-${process.pid}`);
afterAll(() => rmSync(WORK, { recursive: true, force: true }));

/** README.md, DEVELOPMENT.md, every markdown page under docs/ and each example's README (its snippet is the example, shortened). */
function pages(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
    );
  const examples = readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(ROOT, 'examples', e.name, 'README.md')))
    .map((e) => join('examples', e.name, 'README.md'));
  return ['README.md', 'DEVELOPMENT.md', ...walk('docs'), ...examples];
}

interface Block {
  page: string;
  /** 1-based line of the block's first code line in its page. */
  line: number;
  code: string;
  tsx?: boolean;
}

function tsBlocks(page: string, text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const fence = lines[i]!.trim();
    if (fence !== '```ts' && fence !== '```tsx') continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end]!.trim() !== '```') end++;
    blocks.push({ page, line: start + 1, code: lines.slice(start, end).join('\n') + '\n', ...(fence === '```tsx' ? { tsx: true } : {}) });
    i = end;
  }
  return blocks;
}

const PATH_COMMENT = /^\/\/ ((?:[\w.-]+\/)*[\w.-]+\.tsx?)\b/;

/** Write each page's blocks into a directory of its own; returns file → block. */
function writeBlocks(blocks: Block[], root: string): Map<string, Block> {
  const files = new Map<string, Block>();
  blocks.forEach((block, n) => {
    const dir = join(root, block.page.replace(/[/.]/g, '_'));
    const file = join(dir, PATH_COMMENT.exec(block.code)?.[1] ?? `block-${n}.${block.tsx ? 'tsx' : 'ts'}`);
    if (files.has(file)) throw new Error(`${block.page}:${block.line}: a second block at ${relative(dir, file)}`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, block.code);
    files.set(file, block);
  });
  for (const dir of new Set([...files.keys()].map((f) => join(root, relative(root, f).split('/')[0]!)))) {
    const stub = join(dir, 'src', 'agents.ts');
    if (files.has(stub)) continue;
    mkdirSync(dirname(stub), { recursive: true });
    writeFileSync(stub, "import { defineAgents } from 'logbook';\nexport default defineAgents({ agents: [] });\n");
  }
  return files;
}

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (p) => ts.sys.readFile(p));
  const options = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options;
  return { ...options, noEmit: true };
}

/** Compiler errors of `files` (only theirs), as `page:line: message`; .tsx files as a browser page. */
function typecheck(files: Map<string, Block>): string[] {
  const errors: string[] = [];
  const base = compilerOptions();
  const browser = { ...base, jsx: ts.JsxEmit.ReactJSX, lib: [...(base.lib ?? []), 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'] };
  for (const [tsx, options] of [
    [false, base],
    [true, browser],
  ] as const) {
    const group = new Map([...files].filter(([file]) => file.endsWith('.tsx') === tsx));
    if (group.size > 0) errors.push(...typecheckGroup(group, options));
  }
  return errors;
}

function typecheckGroup(files: Map<string, Block>, options: ts.CompilerOptions): string[] {
  const program = ts.createProgram([...files.keys()], options);
  const errors: string[] = [];
  for (const [file, block] of files) {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`not in the program: ${file}`);
    for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const { line } = source.getLineAndCharacterOfPosition(d.start ?? 0);
      errors.push(`${block.page}:${block.line + line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    }
  }
  return errors;
}

describe('code blocks in the README and docs/', () => {
  it('every ```ts block typechecks against the package entry points', { timeout: 180_000 }, () => {
    const blocks = pages().flatMap((page) => tsBlocks(page, readFileSync(join(ROOT, page), 'utf8')));
    expect(blocks.filter((b) => b.page === 'README.md').length).toBeGreaterThanOrEqual(3);
    // The check itself: a block importing an export that does not exist must fail.
    const canary: Block = { page: 'canary.md', line: 1, code: "import { defineToool } from 'logbook';\nexport const t = defineToool;\n" };
    // And a ```tsx block is checked as a React page: a handler that is no function fails.
    const tsxCanary: Block = { page: 'canary-tsx.md', line: 1, code: 'export const b = <button onClick={1}>x</button>;\n', tsx: true };
    const files = writeBlocks([...blocks, canary, tsxCanary], WORK);
    const errors = typecheck(files);
    const [canaryErrors, pageErrors] = [errors.filter((e) => e.startsWith('canary')), errors.filter((e) => !e.startsWith('canary'))];
    expect(canaryErrors.join('\n')).toMatch(/has no exported member named 'defineToool'/);
    expect(canaryErrors.join('\n')).toMatch(/canary-tsx\.md:1: Type 'number' is not assignable/);
    expect(pageErrors).toEqual([]);
  });
});
