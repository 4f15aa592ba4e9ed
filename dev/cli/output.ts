/** Where a command writes: stdout for results, stderr for progress and errors. */
export interface Output {
  out(text: string): void;
  err(text: string): void;
  /** Whether stderr is a terminal (live progress may redraw lines). */
  tty: boolean;
  /** Raw stdout, no newline added (streamed text as it comes); without it, text is printed by whole lines. */
  write?(text: string): void;
}

export const processOutput: Output = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  write: (text) => process.stdout.write(text),
  tty: Boolean(process.stderr.isTTY) && process.env.CI !== 'true',
};

/** A usage mistake: exit code 2 with a hint. */
export class UsageError extends Error {}
