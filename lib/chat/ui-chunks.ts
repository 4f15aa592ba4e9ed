/**
 * The AI SDK's UI message stream protocol as Logbook writes it: the chunk shapes (the subset of
 * `UIMessageChunk` from the `ai` package, version 6, that a run's chat stream uses) and the data
 * parts Logbook adds. Types only, written out here rather than imported, so that `logbook/chat`
 * loads without `ai` installed; test/unit/chat checks them against the package's own types.
 */

/** An approval a call waits for: render it as "approve this refund" and answer with the transport. */
export interface ApprovalData {
  callId: string;
  tool: string;
  /** The arguments asked about (for an edit: the new ones). */
  input: unknown;
  argsHash: string;
  status: 'requested' | 'approved' | 'edited' | 'rejected' | 'expired';
  /** ISO time an unanswered request rejects the call. */
  expiresAt?: string;
  comment?: string;
}

/** A durable wait: a call completed by a signal, a timer or a child run, not by code. */
export interface WaitData {
  callId: string;
  tool: string;
  kind: 'signal' | 'timer' | 'child';
  signal?: string;
  childRunId?: string;
  /** ISO time the wait ends (its timeout, or the timer). */
  until?: string;
  status: 'waiting' | 'done';
}

/** The run needs a person outside the chat (an operator): an unknown outcome, a missing version. */
export interface AttentionData {
  seq: number;
  reason: string;
  callId?: string;
  detail: string;
  status: 'open' | 'resolved';
  outcome?: string;
}

/**
 * Sent (transient, never kept in the message) where text already streamed to this client is
 * not the run's: a worker died mid-answer, or the recorded answer differs from its preview. The
 * response ends there; the transport replays the message from the log (see LogbookChatTransport).
 */
export interface ReplayData {
  reason: 'attempt_abandoned' | 'text_superseded';
  /** The cursor to replay from: its message is sent again from its start. */
  cursor: string;
}

/**
 * The data parts of a Logbook chat message, by name (`data-approval`, ...): a UIMessage's
 * DATA_TYPES (`UIMessage<unknown, LogbookDataTypes>`; a type, not an interface, so it fits the
 * AI SDK's `Record<string, unknown>` constraint).
 */
export type LogbookDataTypes = {
  approval: ApprovalData;
  wait: WaitData;
  attention: AttentionData;
  /** A completed run's structured output (agents with an output schema). */
  output: unknown;
  replay: ReplayData;
};

export type FinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';

/** The chunks a Logbook chat stream sends, each one `UIMessageChunk` of the `ai` package. */
export type LogbookUIChunk =
  | { type: 'start'; messageId?: string }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-input-error'; toolCallId: string; toolName: string; input: unknown; errorText: string }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string }
  | { type: 'tool-output-denied'; toolCallId: string }
  | { type: 'data-approval'; id: string; data: ApprovalData }
  | { type: 'data-wait'; id: string; data: WaitData }
  | { type: 'data-attention'; id: string; data: AttentionData }
  | { type: 'data-output'; id: string; data: unknown }
  | { type: 'data-replay'; data: ReplayData; transient: true }
  | { type: 'error'; errorText: string }
  | { type: 'abort'; reason?: string }
  | { type: 'finish'; finishReason?: FinishReason };

/** The response headers of a UI message stream (the `ai` package's UI_MESSAGE_STREAM_HEADERS). */
export const UI_MESSAGE_STREAM_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
} as const;

/** The id of the assistant message answering the user turn at `turnSeq` (run_started or a user_message). */
export function chatMessageId(runId: string, turnSeq: number): string {
  return `${runId}:${turnSeq}`;
}

/** The turn seq of a message id chatMessageId gave, or undefined for any other id. */
export function turnOfMessageId(runId: string, messageId: string): number | undefined {
  const prefix = `${runId}:`;
  if (!messageId.startsWith(prefix)) return undefined;
  const rest = messageId.slice(prefix.length);
  return /^\d{1,10}$/.test(rest) ? Number(rest) : undefined;
}
