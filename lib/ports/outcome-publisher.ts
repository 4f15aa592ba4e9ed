import type { JsonValue } from '../core/json.js';
import type { RunRef } from '../core/run-ref.js';

export type OutcomeDetailType = 'Agent Run Completed' | 'Agent Run Failed' | 'Agent Run Needs Attention' | 'Agent Run Needs Approval';

export interface OutcomeNotice extends RunRef {
  detailType: OutcomeDetailType;
  /** seq of the event that produced the outcome; with runId it makes the notice idempotent. */
  seq: number;
  status: string;
  summary: string;
  code?: string;
  /** A completed run's structured output (JSON), when its agent has an output schema and it is small enough. */
  output?: JsonValue;
  /** The output was too large for the notice: read it from GET /runs/{id}. */
  outputOmitted?: true;
  /** A workflow run's workflow (defineWorkflow), by the name and version it pinned; absent for an agent run. */
  workflow?: { name: string; version: string };
}

/** Publishes run outcomes (EventBridge in AWS). Called once per outcome seq by the lease holder. */
export interface OutcomePublisher {
  publish(notice: OutcomeNotice): Promise<void>;
}
