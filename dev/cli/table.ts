/** Plain-text tables for people; scripts use --json. */
export function table(headers: string[], rows: (string | number | undefined)[][]): string {
  const cells = rows.map((r) => headers.map((_, i) => clean(r[i])));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]?.length ?? 0)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** Two columns: a label and its value. */
export function keyValues(pairs: [string, string | number | undefined][]): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${k.padEnd(width)}  ${clean(v)}`)
    .join('\n');
}

function clean(value: string | number | undefined): string {
  if (value === undefined) return '';
  return String(value).replace(/\s+/g, ' ');
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export { formatUsd } from '../../lib/core/money.js';

export function formatTime(iso: string | undefined): string {
  if (!iso) return '';
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}
