import { TERMINAL, definitionOf, type Attention, type RunView, type Wait } from './types.js';

/**
 * The actions the run page offers for a run view: exactly the requests the API would accept now,
 * so no button sends something that is refused. An ended run (completed, failed, cancelled) takes
 * no approval, signal, resolution, retry or cancel (409 run_ended); a completed one still takes a
 * follow-up message (it reopens the run), and any run can be forked. A workflow run takes no
 * message (409: it takes signals); it forks where no operation is in flight (fork-points.ts); its
 * approvals, signals and attention name operations `op-<n>`.
 */
export interface AllowedActions {
  /** Calls awaiting approval: approve, reject, edit. */
  approvals: Wait[];
  /** Calls waiting for a signal: send it. */
  signals: Wait[];
  /** Open attention: resolve a call (succeeded, failed, rerun) or a run-level park (retry, fail). */
  attention: Attention[];
  /** A head-level park with no attention entry of its own: retry or fail. */
  park: { reason: string; detail: string } | undefined;
  /** Calls a cancel left with no known outcome: shown to check by hand, with no action. */
  unresolved: string[];
  cancel: boolean;
  message: boolean;
  fork: boolean;
}

export function allowedActions(view: RunView): AllowedActions {
  const workflow = definitionOf(view).kind === 'workflow';
  const ended = TERMINAL.has(view.status);
  const waits = ended ? [] : (view.waiting ?? []);
  const attention = ended ? [] : view.attention;
  const park = !ended && view.park && !attention.some((a) => !a.callId) ? view.park : undefined;
  return {
    approvals: waits.filter((w) => w.kind === 'approval'),
    signals: waits.filter((w) => w.kind === 'signal'),
    attention,
    park,
    unresolved: view.unresolved ?? [],
    cancel: !ended,
    message: !workflow && (!ended || view.status === 'completed'),
    fork: true,
  };
}
