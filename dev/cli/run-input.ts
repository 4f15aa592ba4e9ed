import { readFile } from 'node:fs/promises';
import { UsageError } from './output.js';

/** Input is JSON when it parses as JSON, else the text itself. */
function parseLoose(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * A run's input from the command line (`runs start`, `runs message`, `runs fork`): `--input`
 * (JSON when it parses, else the text) or `--input-file` (a `.json` file must hold JSON; any other
 * file is sent as its text, JSON if it parses). One of the two, never both; undefined when neither
 * is given, and the caller says whether that is allowed.
 */
export async function readRunInput(inline: string | undefined, file: string | undefined): Promise<unknown> {
  if (inline !== undefined && file !== undefined) throw new UsageError('give --input or --input-file, not both');
  if (inline !== undefined) return parseLoose(inline);
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--input-file ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  // A file named .json must hold JSON: sending its text instead would hide the typo.
  if (/\.json$/i.test(file)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new UsageError(`--input-file must be JSON (${file} is not valid JSON)`);
    }
  }
  return parseLoose(text.replace(/\r?\n$/, ''));
}
