import type { z } from 'zod';

/** zod issues as `{path, message}`, paths prefixed (`body.args.amountCents`): one rule for every edge. */
export function zodIssues(error: z.ZodError, prefix: string): { path: string; message: string }[] {
  return error.issues.map((i) => ({ path: [prefix, ...i.path.map(String)].filter((p) => p !== '').join('.'), message: i.message }));
}

/** The same issues as one line, for logs and error results. */
export function zodIssuesText(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`).join('; ');
}
