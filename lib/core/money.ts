/**
 * Dollars as Logbook shows them. The log and the head keep the exact sums of what each model call
 * cost (a float sum: 0.009441000000000001); the API's run views, the CLI and the inspector show
 * them rounded to micro-dollars, below a thousandth of the cheapest call, by this one helper
 * (the inspector's own copy in dev/ui/client/format.ts is held to it by test/unit/ui/money.test.ts).
 */

/** Decimal places a dollar amount keeps where it is shown (micro-dollars). */
export const USD_DECIMALS = 6;

/** `value` rounded to USD_DECIMALS places: a number whose JSON has at most that many decimals. */
export function roundUsd(value: number): number {
  if (!Number.isFinite(value)) return value;
  const scale = 10 ** USD_DECIMALS;
  // An integer divided by a power of ten is the double nearest that decimal, which prints as it.
  return Math.round(value * scale) / scale;
}

/** For people: four decimals under a dollar (a turn costs fractions of a cent), else cents. */
export function formatUsd(value: number): string {
  const rounded = roundUsd(value);
  return `$${rounded.toFixed(Math.abs(rounded) < 1 ? 4 : 2)}`;
}
