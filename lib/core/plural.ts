/**
 * "1 repair", "2 repairs": a count with its noun, for every message, line and label Logbook builds
 * (test/unit/core/plural.test.ts finds counts written without it). The inspector, which cannot
 * import lib/, has the same function in dev/ui/client/format.ts.
 */
export function plural(n: number, noun: string, nouns = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : nouns}`;
}
