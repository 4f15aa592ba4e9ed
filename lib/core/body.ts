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
 * The text of inline bodies already serialized, per body object. Bodies are never changed in
 * place (an edited call gets a new args body), so the memo is exact; it spares a long run
 * re-serializing its whole history for every model call (the input estimate here, the prompt in
 * the engine). Copies (snapshots, clones) are serialized anew, once.
 */
const inlineTexts = new WeakMap<Body, string>();

/** An inline body as the model reads it: a string as is, anything else as JSON. */
export function inlineText(body: Extract<Body, { kind: 'inline' }>): string {
  if (typeof body.value === 'string') return body.value;
  let text = inlineTexts.get(body);
  if (text === undefined) {
    text = JSON.stringify(body.value);
    inlineTexts.set(body, text);
  }
  return text;
}

/** Bytes a body contributes to a prompt, used for the conservative input-token estimate. */
export function bodySize(body: Body): number {
  return body.kind === 'blob' ? body.size : inlineText(body).length;
}
