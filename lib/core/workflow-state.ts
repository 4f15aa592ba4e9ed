import type { Body } from './body.js';
import type { OP_RESULT_SOURCES, OpKind, OpWait } from './workflow-events.js';
import type { Policy } from './events.js';

/** What an operation's op_result recorded: returned to the workflow's code, live and on replay alike. */
export interface OpResult {
  ok: boolean;
  output: Body;
  source: (typeof OP_RESULT_SOURCES)[number];
  errorCode?: string;
  /** The step's function returned undefined. */
  void?: true;
  /** Who sent it, for results that came through the inbox (a signal, a decision). */
  sentBy?: string;
}

/**
 * One operation of a workflow run, folded from its events. `attempt` counts the attempts begun
 * (started markers, or the results and retries of a rerun step, which writes no marker).
 */
export interface OpState {
  op: number;
  kind: OpKind;
  name: string;
  /** started: a marker with no result; retrying: the last attempt failed and the next waits for retryAt. */
  status: 'started' | 'retrying' | 'done';
  /** seq of the operation's first event. */
  seq: number;
  attempt: number;
  policy?: Policy;
  notAfter?: number;
  wait?: OpWait;
  retryAt?: number;
  lastError?: { code: string; message: string };
  /** As a tool call's (CallState): what verify() saw, the landed looks, a person's rerun. */
  verified?: 'landed' | 'not_landed' | 'unknown';
  landedLooks?: number;
  rerunApproved?: boolean;
  rerunFrom?: number;
  result?: OpResult;
  /** When the operation's first event was written (its writer's clock: informational, as event `at`s are). */
  startedAt?: number;
  /** The lease epoch that wrote its first event (the step span its trace span hangs under). */
  startedBy?: number;
  /** When its result was written. */
  endedAt?: number;
}

export interface WorkflowState {
  /** Operation n at index n - 1; null where an operation has no event yet (one asked for later was logged first). */
  ops: (OpState | null)[];
  /**
   * The operations whose results are in the log, in the order they were written: a replay hands
   * the results to the code in exactly this order, so a run of concurrent operations asks for the
   * same next operations as it did live (workflow-replay.ts).
   */
  resultOrder: number[];
}
