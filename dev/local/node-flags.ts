/**
 * Running from this repository's TypeScript sources (rather than an installed package's dist/)?
 * Then `logbook` must resolve to its sources too (the `logbook-source` export condition).
 */
export const FROM_SOURCE = import.meta.url.endsWith('.ts');

/** The sibling module `name` (without extension) of a dev-kit file, as .ts from source or .js from dist. */
export function sibling(name: string, from: string): URL {
  return new URL(`./${name}${FROM_SOURCE ? '.ts' : '.js'}`, from);
}

/**
 * Node flags for a child process that loads the application's TypeScript (its agents module):
 * tsx as the loader, and the source condition when Logbook itself runs from source.
 */
export function childExecArgv(): string[] {
  return [...(FROM_SOURCE ? ['--conditions=logbook-source'] : []), '--import', import.meta.resolve('tsx')];
}
