import { plural } from './plural.js';
/**
 * How an error repeats what a client sent: only a short, name-shaped value that holds no secret
 * (`unknown agent "suport"` helps with a typo); anything else is described, not repeated, so a
 * token pasted into a name field never comes back in the answer, a log line or a terminal.
 */
export const MAX_ECHO_CHARS = 64;
const NAME_SHAPED = /^[A-Za-z0-9_.:@+-]+$/;

export function echoValue(value: string, redact: (text: string) => string): string {
  if (value.length <= MAX_ECHO_CHARS && NAME_SHAPED.test(value) && redact(value) === value) return JSON.stringify(value);
  return `(${plural(value.length, 'character')}, not repeated)`;
}
