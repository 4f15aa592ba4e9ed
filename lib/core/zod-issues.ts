/**
 * The one way Logbook turns zod issues into text, for every edge that validates with zod (API
 * requests, EventBridge details, SQS bodies, the environment, tool arguments, model responses,
 * events read back). Typed structurally so that this pure module needs no zod import.
 */

/** One problem: where (`body.budgets.maxSteps`; empty for the value itself) and what. */
export interface IssueText {
  path: string;
  message: string;
}

/** The part of a zod issue this module reads (zod 4's `$ZodIssue` fits it). */
interface IssueLike {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  /** invalid_union: the issues of each branch. */
  readonly errors?: readonly (readonly IssueLike[])[];
  /** unrecognized_keys: the unknown keys. */
  readonly keys?: readonly string[];
}

export interface IssueOptions {
  /** Path segment put before every path: `body`, `query`, `detail`. */
  prefix?: string;
}

/**
 * Flatten zod issues into `{path, message}`, one per bad field:
 * - a union reports the branch that came closest (fewest issues, then the deepest: the branch
 *   whose shape matched), not zod's generic "Invalid input";
 * - an unknown key of a strict object is its own issue, `<path>.<key>: unknown field`.
 */
export function zodIssues(error: { readonly issues: readonly IssueLike[] }, options: IssueOptions = {}): IssueText[] {
  const out: IssueText[] = [];
  const root = options.prefix === undefined ? [] : [options.prefix];
  const walk = (issues: readonly IssueLike[], prefix: readonly PropertyKey[]) => {
    for (const issue of issues) {
      const path = [...prefix, ...issue.path];
      if (issue.code === 'invalid_union' && issue.errors && issue.errors.length > 0) {
        const closest = [...issue.errors].sort((a, b) => a.length - b.length || depth(b) - depth(a))[0] ?? [];
        if (closest.length > 0) {
          walk(closest, path);
          continue;
        }
      }
      if (issue.code === 'unrecognized_keys' && issue.keys) {
        for (const key of issue.keys) out.push({ path: render([...path, key]), message: 'unknown field' });
        continue;
      }
      out.push({ path: render(path), message: issue.message });
    }
  };
  const render = (path: readonly PropertyKey[]) => [...root, ...path.map(String)].join('.');
  walk(error.issues, []);
  return out;
}

function depth(issues: readonly IssueLike[]): number {
  return Math.max(0, ...issues.map((i) => i.path.length));
}

export interface TextOptions {
  /** What an empty path is called: `(root)` by default, `(env)` for the environment. */
  root?: string;
  /** Show at most this many issues (the rest are counted). */
  max?: number;
}

/** `path: message; path: message`, for error messages and log lines. */
export function issuesText(issues: readonly IssueText[], options: TextOptions = {}): string {
  const root = options.root ?? '(root)';
  const shown = options.max === undefined ? issues : issues.slice(0, options.max);
  const text = shown.map((i) => `${i.path === '' ? root : i.path}: ${i.message}`).join('; ');
  const more = issues.length - shown.length;
  return more > 0 ? `${text}; and ${more} more` : text;
}

/** `zodIssues` then `issuesText`: one line naming each bad field. */
export function zodIssuesText(error: { readonly issues: readonly IssueLike[] }, options: IssueOptions & TextOptions = {}): string {
  return issuesText(zodIssues(error, options), options);
}
