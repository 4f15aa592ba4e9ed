/**
 * Structured output, the pure part: how an answer's text is read as JSON, and what the model is
 * told when its answer does not fit the agent's output schema. The engine checks the answer
 * against the schema (engine/output-check.ts) before the response is written; fold and decide
 * read only what the log says (model_response.output / outputError).
 */

/** The failure code of a run whose answers kept not fitting the output schema. */
export const OUTPUT_INVALID = 'output_invalid';

/** Default number of invalid answers fed back to the model, in a row, before the run fails. */
export const DEFAULT_OUTPUT_REPAIRS = 2;

/** At most this many repairs may be pinned: each is a whole model call of the run's budget. */
export const MAX_OUTPUT_REPAIRS = 10;

/** The repair message quotes at most this much of the problem (the issues list can be long). */
const MAX_ERROR_CHARS = 2000;

export type AnswerJson = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * The answer's text as JSON. Whitespace around it, and one Markdown code fence around the whole
 * answer (```json ... ```), are accepted: models add them even when asked for JSON only, and
 * what is inside is exactly what a strict reading would take. Anything else must parse whole.
 */
export function answerJson(text: string): AnswerJson {
  let body = text.trim();
  const fenced = /^```[A-Za-z0-9_-]*\s*\n([\s\S]*?)\n?```$/.exec(body);
  if (fenced) body = (fenced[1] ?? '').trim();
  if (body === '') return { ok: false, error: 'the answer is empty; it must be a JSON value' };
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch (error) {
    return { ok: false, error: `the answer is not valid JSON (${error instanceof Error ? error.message : String(error)})` };
  }
}

/**
 * What the model reads after an invalid answer (a user turn right after it): the problem, and
 * what to do. Pure, so a resumed run rebuilds exactly the prompt the live one sent.
 */
export function repairMessage(error: string, repair: number, maxRepairs: number): string {
  const problem = error.length > MAX_ERROR_CHARS ? `${error.slice(0, MAX_ERROR_CHARS)}…` : error;
  return (
    `Your answer does not match the required output schema: ${problem}\n` +
    `Answer again with only a JSON value that fits the schema, no other text ` +
    `(correction ${repair} of at most ${maxRepairs}).`
  );
}
