import { z } from 'zod';

/**
 * A payload inside an event: inline when small, otherwise a reference to a content-addressed blob
 * with its sha256, size and a short summary for people reading the log. State keeps bodies as they
 * were written; the prompt builder resolves references through one content-addressed cache.
 */
export const inlineBodySchema = z.object({ kind: z.literal('inline'), value: z.json() });
export const blobBodySchema = z.object({
  kind: z.literal('blob'),
  key: z.string().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int().nonnegative(),
  summary: z.string(),
});
export const bodySchema = z.discriminatedUnion('kind', [inlineBodySchema, blobBodySchema]);

export type Body = z.infer<typeof bodySchema>;
export type BlobBody = z.infer<typeof blobBodySchema>;

export function inline(value: z.infer<typeof inlineBodySchema>['value']): Body {
  return { kind: 'inline', value };
}

/**
 * An inline body as the model reads it: a string as is, anything else as JSON. Not memoized here:
 * its callers keep what they derive per message (budgets.ts, engine/prompt.ts), so a long run
 * serializes each body about twice per container, and a cold container does not pay a weak-map
 * entry (and its garbage collection) for every body of its history.
 */
export function inlineText(body: Extract<Body, { kind: 'inline' }>): string {
  const { value } = body;
  if (typeof value === 'string') return value;
  // JSON writes a finite number exactly as String does (ECMA-262 SerializeJSONProperty), and
  // String keeps small integers' text in a cache instead of allocating it again.
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return JSON.stringify(value);
}

/** Bytes a body contributes to a prompt, used for the conservative input-token estimate. */
export function bodySize(body: Body): number {
  return body.kind === 'blob' ? body.size : inlineText(body).length;
}
