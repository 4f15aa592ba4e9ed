import { LogbookError } from '../core/errors.js';

/**
 * The uninterrupted run of a harness scenario parked for a person and nobody answered. Every
 * crash point would be judged against a run that never got past that park, so the harness stops.
 */
export class BaselineParkedError extends LogbookError {
  readonly code = 'harness_baseline_parked';
  constructor(
    readonly scenario: string,
    readonly parks: readonly string[],
    hasResolver: boolean,
  ) {
    super(
      `scenario "${scenario}": the uninterrupted run parked for a person (${parks.join('; ')}) and ` +
        (hasResolver ? 'the scenario resolver left it unanswered' : 'the scenario has no resolver: give the scenario a resolver'),
    );
  }
}

/** The uninterrupted run of a harness scenario never reached an end (a loop, a wait that never ends). */
export class BaselineUnfinishedError extends LogbookError {
  readonly code = 'harness_baseline_unfinished';
  constructor(
    readonly scenario: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`scenario "${scenario}": the uninterrupted run did not finish: ${detail}`, options);
  }
}

/** A recorded side effect the default duplicate check cannot read (it needs a string `key`). */
export class SideEffectShapeError extends LogbookError {
  readonly code = 'harness_effect_shape';
  constructor(effect: unknown) {
    super(
      `side effect ${safeJson(effect)} has no string \`key\`: record effects as { key, op?, applied?, readOnly? } ` +
        '(effectLog() does) or give the scenario an onceKey(effect)',
    );
  }
}

function safeJson(value: unknown): string {
  try {
    const text = JSON.stringify(value) ?? String(value);
    return text.length > 120 ? `${text.slice(0, 119)}…` : text;
  } catch {
    return String(value);
  }
}

/** The scenario's resolver answered a park in a way the run refused (409 over the API). */
export class ResolverAnswerRefusedError extends LogbookError {
  readonly code = 'harness_resolver_refused';
  constructor(attention: string, answer: string, options: { cause: unknown }) {
    super(
      `the scenario resolver answered ${answer} to ${attention}, and the run refused it: ${(options.cause as Error)?.message ?? String(options.cause)}`,
      options,
    );
  }
}

/**
 * A fake service (effectLog().writeFenced) refused a write that arrived late: its fencing token
 * is below the highest the service saw for the key (a newer worker has the run), or it came after
 * its deadline. The tool throws it on; the engine leaves the call to its policy.
 */
export class StaleWriteError extends LogbookError {
  constructor(
    readonly code: 'stale_fencing_token' | 'request_expired',
    readonly op: string,
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}
