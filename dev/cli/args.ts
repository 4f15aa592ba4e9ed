import { parseArgs } from 'node:util';
import { UsageError } from './output.js';

/** A command's flags as `node:util` parseArgs takes them, plus the value each one expects. */
export interface FlagSpec {
  type: 'string' | 'boolean';
  short?: string;
  default?: string | boolean;
  /** May be given more than once (its value is then an array). */
  multiple?: boolean;
  /** What the value looks like in messages (`--limit N`); string flags only. */
  value?: string;
}
export type FlagSpecs = Record<string, FlagSpec>;

/** `--status S, --limit N, --json`: the flags a command takes, for messages. */
export function describeFlags(flags: FlagSpecs): string {
  return Object.entries(flags)
    .map(([name, spec]) => `--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`)
    .join(', ');
}

type ParseConfig<F extends FlagSpecs> = { args: string[]; options: F; allowPositionals: true; strict: true };
export type ParsedArgs<F extends FlagSpecs> = ReturnType<typeof parseArgs<ParseConfig<F>>>;

/**
 * parseArgs, strict, with every usage mistake said in the command's terms: an unknown flag is
 * named, with the flags `command` does take; a missing or unwanted value names the flag.
 */
export function parseCommandArgs<F extends FlagSpecs>(command: string, argv: string[], flags: F): ParsedArgs<F> {
  const options = nodeOptions(flags) as F;
  // A first, lenient pass only to find every unknown flag (strict mode stops at the first).
  const { tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true });
  const unknown = tokens.flatMap((t) => (t.kind === 'option' && !Object.hasOwn(flags, t.name) ? [t.rawName] : []));
  if (unknown.length > 0) {
    const list = describeFlags(flags);
    throw new UsageError(
      `unknown option${unknown.length > 1 ? 's' : ''} ${[...new Set(unknown)].join(', ')} for \`${command}\`; ${list ? `it takes: ${list}` : 'it takes no options'}`,
    );
  }
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    if (isParseArgsError(error)) throw new UsageError(`${(error as Error).message} (\`${command}\`)`);
    throw error;
  }
}

/** The first positional argument (a command word), whatever flags come before it. */
export function firstPositional(argv: string[], flags: FlagSpecs): string | undefined {
  return parseArgs({ args: argv, options: nodeOptions(flags), allowPositionals: true, strict: false }).positionals[0];
}

export function isParseArgsError(error: unknown): boolean {
  return error instanceof Error && 'code' in error && String((error as { code: unknown }).code).startsWith('ERR_PARSE_ARGS');
}

/** parseArgs rejects keys it does not know: keep only its own. */
function nodeOptions(flags: FlagSpecs): Record<string, Omit<FlagSpec, 'value'>> {
  return Object.fromEntries(Object.entries(flags).map(([name, { value: _value, ...spec }]) => [name, spec]));
}
