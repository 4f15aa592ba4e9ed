import type { JsonValue } from '../core/json.js';
import { requestApproval, requestSignal } from '../engine/control-requests.js';
import type { Outside } from './driver.js';

export interface WaitAnswers {
  /** The payload to send each signal a workflow waits for, by signal name (absent: the signal is not sent; it times out). */
  signals?: Record<string, JsonValue>;
  /** The decision on each approval a workflow waits for, by operation name: 'approve' (default) or 'reject'. */
  approvals?: Record<string, 'approve' | 'reject'> | 'approve' | 'reject';
  /** Who sends them (`sentBy` / `by` in the log). Default 'harness'. */
  by?: string;
}

/**
 * The scripted outside world for workflow runs (driveRun's and runCrashHarness's `outside`):
 * when the run's head lists a signal wait it sends the payload given for that signal; when it
 * lists an approval wait it decides it, bound to the arguments the run asked about (argsHash).
 * One request per call; it goes through the API's request functions (and their inbox
 * checkpoints), so the harness crashes there too.
 */
export function answerWaits(answers: WaitAnswers): Outside {
  const by = answers.by ?? 'harness';
  return async (head, deps) => {
    const run = { tenant: head.tenant, runId: head.runId };
    for (const wait of head.waits ?? []) {
      if (wait.kind === 'signal' && wait.signal !== undefined && answers.signals && wait.signal in answers.signals) {
        await requestSignal(deps, run, { signal: wait.signal, payload: answers.signals[wait.signal]! }, by);
        return true;
      }
      if (wait.kind === 'approval' && wait.argsHash !== undefined) {
        const rule = answers.approvals ?? 'approve';
        const decision = typeof rule === 'string' ? rule : rule[wait.tool];
        if (!decision) continue;
        await requestApproval(deps, run, { callId: wait.callId, decision, argsHash: wait.argsHash }, by);
        return true;
      }
    }
    return false;
  };
}
