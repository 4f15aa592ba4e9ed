import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEFAULT_RETRY, withRetry, type RetryOptions } from './aws-errors.js';
import { RETENTION } from './table-definition.js';

export interface DynamoStoreOptions {
  doc: DynamoDBDocumentClient;
  tableName: string;
  retry?: Partial<RetryOptions>;
  /** Clock for TTL filtering and inbox-item expiry; defaults to Date.now. */
  now?: () => number;
  /**
   * Retention for events whose run horizon (run_started.expiresAt) cannot be found, and for inbox
   * items. Defaults to RETENTION.eventsDays.
   */
  fallbackRetentionMs?: number;
}

/** Same shape as the memory store's stats: a test counts requests and items read per step. */
export interface DynamoStats {
  /** HTTP requests sent to DynamoDB, retries included. */
  requests: number;
  /** Items DynamoDB read for us (GetItem hits, Query ScannedCount). */
  itemsRead: number;
}

/** What the event log, head and inbox modules share: one client, one table, one set of stats. */
export class DynamoContext {
  readonly doc: DynamoDBDocumentClient;
  readonly table: string;
  readonly stats: DynamoStats = { requests: 0, itemsRead: 0 };
  readonly now: () => number;
  readonly fallbackRetentionMs: number;
  private readonly retry: RetryOptions;

  constructor(options: DynamoStoreOptions) {
    this.doc = options.doc;
    this.table = options.tableName;
    this.now = options.now ?? Date.now;
    this.fallbackRetentionMs = options.fallbackRetentionMs ?? RETENTION.eventsDays * 86_400_000;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
  }

  /** Send one request with retries; every attempt counts as a request. */
  send<T>(what: string, request: () => Promise<T>): Promise<T> {
    return withRetry(what, this.retry, () => {
      this.stats.requests++;
      return request();
    });
  }

  countRead(items: number | undefined): void {
    this.stats.itemsRead += items ?? 0;
  }
}
