import type { Body } from './body.js';
import type { AttentionReason, CallWait, EventOf } from './events.js';
import type { LoggedMessage } from './messages.js';
import type { ContextSummaryState } from './context-events.js';
import type { WorkflowState } from './workflow-state.js';
import type { RunStatus } from './run-status.js';

/** Bumped whenever fold's output shape or meaning changes: older snapshots are then ignored. */
export const FOLD_VERSION = 4;

export type CallStatus = 'decided' | 'started' | 'done';

export interface CallResult {
  ok: boolean;
  output: Body;
  source: EventOf<'tool_result'>['source'];
  errorCode?: string;
}

/** Where a call stands with its approval (only for tools pinned with `approval`). */
export interface CallApproval {
  status: 'pending' | 'approved' | 'rejected' | 'expired';
  /** Hash of the arguments requested, then of the arguments approved (edited ones for an edit). */
  argsHash: string;
  requestedSeq: number;
  expiresAt?: number;
  decidedBy?: string;
  edited?: boolean;
}

export interface CallState {
  callId: string;
  providerId: string;
  name: string;
  args: Body;
  argsError?: string;
  /** seq of the model_response that decided this call. */
  modelSeq: number;
  status: CallStatus;
  /** Number of tool_started events so far. */
  attempt: number;
  notAfter?: number;
  /** Outcome of verify() for the current attempt, when the policy is verify. */
  verified?: 'landed' | 'not_landed' | 'unknown';
  /**
   * How often verify() said landed for the current attempt. A landed look whose result a crash
   * lost is looked at again once; a second one parks (a result that can never be written must not
   * make the run look forever).
   */
  landedLooks?: number;
  /** A person answered "rerun": start again without waiting. */
  rerunApproved?: boolean;
  /** `attempt` when a person last answered "rerun": the starts they already looked at. */
  rerunFrom?: number;
  result?: CallResult;
  approval?: CallApproval;
  /** A durable wait: started, completed by a signal or timer instead of code. */
  wait?: CallWait;
}

export interface OpenAttentionState {
  seq: number;
  reason: AttentionReason;
  callId?: string;
  detail: string;
}

export interface UsageState {
  /** Model calls started (reservations), never decreases. */
  steps: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export type RunStatusState = Exclude<RunStatus, 'waiting' | 'awaiting_approval'>;

export type RunOutcomeState =
  | { type: 'completed'; seq: number; answer: Body; output?: Body }
  | { type: 'failed'; seq: number; code: string; message: string }
  | { type: 'cancelled'; seq: number; unresolved: string[] };

/** What a fresh worker needs to continue a run: everything is derived from the log. */
export interface RunState {
  foldVersion: number;
  lastSeq: number;
  started: EventOf<'run_started'>;
  status: RunStatusState;
  messages: LoggedMessage[];
  calls: Record<string, CallState>;
  /** callIds of the latest model_response, in order. */
  turnCalls: string[];
  /** Text of the latest model_response, the answer if it asked for no tools. */
  lastText: Body | null;
  /** The latest model call produced a response that asked for no tools: the run can complete. */
  answered: boolean;
  usage: UsageState;
  /** A model_started with no response yet: its reservation stays spent. */
  openModel?: {
    seq: number;
    reserved: { inputTokens: number; outputTokens: number; costUsd: number };
    /** A summary call (context policy) and the turns its answer will cover. */
    summary?: { turns: number };
  };
  /** Consecutive model calls that produced no response (crash, failure). */
  unansweredModelCalls: number;
  lastModelFailure?: { code: string; message: string; retryable: boolean };
  attention: OpenAttentionState[];
  cancel?: { seq: number; by: string };
  failRequested?: { by: string };
  /** Inbox ids already turned into events: each item is ingested once. */
  inboxSeen: string[];
  /** Follow-up user messages received, delivered into `messages` at the next model call. */
  pendingMessages: Body[];
  /** The running summary of the oldest turns, when the pinned context policy summarizes. */
  context?: ContextSummaryState;
  outcome?: RunOutcomeState;
  /**
   * Under an output schema (run_started.output): the latest answer's parsed output when it fit,
   * or why it did not; and how many answers in a row did not fit (the repairs used). Absent for a
   * run without an output schema, so such a run folds exactly as before.
   */
  answerOutput?: { ok: true; output: Body } | { ok: false; error: string; seq: number };
  outputRepairs?: number;
  /** A workflow run's operations (run_started.workflow); absent on an agent run. */
  workflow?: WorkflowState;
}
