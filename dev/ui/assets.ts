import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The inspector's browser modules. From Logbook's own sources (this file is .ts) they are
 * transpiled on the fly with esbuild, a dev dependency of this repository; from the package they
 * are the .js files `npm run build` compiled into dist/dev/ui/client. Either way they are plain ES
 * modules served from this server: nothing comes from a CDN, the inspector works offline.
 */
const CLIENT_DIR = fileURLToPath(new URL('./client/', import.meta.url));
const FROM_SOURCE = import.meta.url.endsWith('.ts');
/** Module names are kebab-case words: no dots, no slashes, nothing outside the client directory. */
const MODULE_NAME = /^[a-z][a-z0-9-]{0,40}$/;

const cache = new Map<string, { mtimeMs: number; code: string }>();

/** The JavaScript of client module `name` (`main` for main.js), or undefined when there is none. */
export async function clientModule(name: string): Promise<string | undefined> {
  if (!MODULE_NAME.test(name)) return undefined;
  const file = join(CLIENT_DIR, `${name}.${FROM_SOURCE ? 'ts' : 'js'}`);
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) return undefined;
  const cached = cache.get(file);
  if (cached && cached.mtimeMs === info.mtimeMs) return cached.code;
  const source = await readFile(file, 'utf8');
  let code = source;
  if (FROM_SOURCE) {
    const { transform } = await import('esbuild');
    code = (await transform(source, { loader: 'ts', format: 'esm', target: 'es2022', sourcefile: `${name}.ts` })).code;
  }
  cache.set(file, { mtimeMs: info.mtimeMs, code });
  return code;
}

export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f3a5f"/><path d="M9 8h4v13h10v4H9z" fill="#f4f7fb"/></svg>`;
