import type { CallWait, PinnedTool } from '../core/events.js';
import type { CallState } from '../core/state.js';
import type { ToolDefinition } from '../authoring/types.js';
import { cancelChild } from './child-runs.js';
import type { RunSession } from './run-session.js';

/** How the engine starts and completes the durable waits that authoring/waits.ts defines. */

/**
 * The wait a call of this pinned tool starts now: never past the run's deadline. A child call's
 * wait depends on what the parent has left (child-runs.ts), so it is not built here.
 */
export function callWait(pinned: PinnedTool, impl: ToolDefinition, args: unknown, now: number, deadlineAt: number): CallWait | undefined {
  const wait = pinned.wait;
  if (!wait || wait.kind === 'child') return undefined;
  if (wait.kind === 'signal') return { kind: 'signal', signal: wait.signal, until: Math.min(now + wait.timeoutMs, deadlineAt) };
  const ms = impl.wait?.kind === 'timer' ? impl.wait.durationMs(args) : wait.maxMs;
  return { kind: 'timer', until: Math.min(now + Math.min(ms, wait.maxMs), deadlineAt) };
}

/** Record the start of a durable wait. Nothing runs: the call completes from outside. */
export async function startWait(session: RunSession, call: CallState, attempt: number, wait: CallWait): Promise<void> {
  await session.append({ type: 'tool_started', callId: call.callId, attempt, notAfter: wait.until, wait });
}

/** The waits whose time is up: a timeout error for a signal, the completion of a timer. */
export async function completeWaits(session: RunSession, callIds: string[]): Promise<void> {
  for (const callId of callIds) {
    const call = session.state.calls[callId];
    const wait = call?.wait;
    if (!call || !wait) continue;
    const cutShort = session.state.started.budgets.deadlineAt <= wait.until ? 'the run reached its deadline' : undefined;
    if (wait.kind === 'child') {
      // The child never answered in time (parked for a person, say): stop it, and tell the model.
      await cancelChild(session, wait.runId, 'the parent stopped waiting');
      const message = cutShort ?? `child run ${wait.runId} gave no answer by ${new Date(wait.until).toISOString()}`;
      await session.append({
        type: 'tool_result',
        callId,
        ok: false,
        output: { kind: 'inline', value: { error: 'child_timeout', childRunId: wait.runId, message } },
        source: 'timeout',
        errorCode: 'child_timeout',
      });
    } else if (wait.kind === 'signal') {
      const message = cutShort ?? `no signal "${wait.signal}" arrived in time`;
      await session.append({
        type: 'tool_result',
        callId,
        ok: false,
        output: { kind: 'inline', value: { error: 'signal_timeout', signal: wait.signal, message } },
        source: 'timeout',
        errorCode: 'signal_timeout',
      });
    } else {
      await session.append({
        type: 'tool_result',
        callId,
        ok: true,
        output: { kind: 'inline', value: { slept: true, until: new Date(wait.until).toISOString(), ...(cutShort ? { note: cutShort } : {}) } },
        source: 'timer',
      });
    }
  }
}
