import type { RunStatus } from '../../ports/run-heads.js';
import type { RunRef } from '../../core/run-ref.js';
import { TABLE } from './table-definition.js';

/**
 * Key layout of the single table (see table-definition.ts for the attribute names):
 *   pk = RUN#<tenant>#<runId>, sk = EVT#<seq, 10 digits> | HEAD | INBOX#<ulid>
 *                                   | STR#<callSeq, 10 digits>#<index, 10 digits> (streamed text)
 *   byTenant:        tenantPk = TENANT#<tenant>, tenantSk = <inverted createdAt>#<runId>
 *   byTenantStatus:  statusPk = TENANT#<tenant>#<status>, tenantSk as above
 *   byParent (sparse): parentPk = PARENT#<tenant>#<parent runId>, tenantSk as above
 *   sweep (sparse):  sweepPk = SWEEP#<shard>, wakeAt = the sweep time of sweepEntry(head)
 */

export const PK = TABLE.partitionKey;
export const SK = TABLE.sortKey;
export const TTL = TABLE.ttlAttribute;

export const SEQ_DIGITS = 10;
export const MAX_SEQ = 10 ** SEQ_DIGITS - 1;
export const HEAD_SK = 'HEAD';
export const EVENT_PREFIX = 'EVT#';
export const INBOX_PREFIX = 'INBOX#';
export const LAST_EVENT_SK = EVENT_PREFIX + '9'.repeat(SEQ_DIGITS);

/** A run's partition key: the one place a run's storage key is built (never put in an error: see runName). */
export function pk(run: RunRef): string {
  return `RUN#${run.tenant}#${run.runId}`;
}

export function eventSk(seq: number): string {
  if (!Number.isSafeInteger(seq) || seq < 0 || seq > MAX_SEQ) throw new RangeError(`seq out of range: ${seq}`);
  return EVENT_PREFIX + String(seq).padStart(SEQ_DIGITS, '0');
}

export const STREAM_PREFIX = 'STR#';
export const LAST_STREAM_SK = STREAM_PREFIX + '9'.repeat(SEQ_DIGITS) + '#' + '9'.repeat(SEQ_DIGITS);

/** A streamed chunk's sort key: after every event and the head, sorted by (callSeq, index). */
export function streamSk(callSeq: number, index: number): string {
  return STREAM_PREFIX + eventSk(callSeq).slice(EVENT_PREFIX.length) + '#' + eventSk(index).slice(EVENT_PREFIX.length);
}

export function seqOfSk(sk: string): number {
  return Number(sk.slice(EVENT_PREFIX.length));
}

export function inboxSk(id: string): string {
  return INBOX_PREFIX + id;
}

export function tenantPk(tenant: string): string {
  return `TENANT#${tenant}`;
}

/** The tenant's admission set (DynamoAdmission): its own partition, beside the runs'. */
export function admissionPk(tenant: string): string {
  return `ADMISSION#${tenant}`;
}
export const ADMISSION_SK = 'SLOTS';

export function statusPk(tenant: string, status: RunStatus): string {
  return `TENANT#${tenant}#${status}`;
}

/** Child runs of one parent (same tenant: the tenant is part of the key). */
export function parentPk(tenant: string, parentRunId: string): string {
  return `PARENT#${tenant}#${parentRunId}`;
}

const MAX_TIME = 9_999_999_999_999;

/** Sorts ascending newest first, ties by run id ascending (the memory store's order). */
export function tenantSk(createdAt: number, runId: string): string {
  return `${String(MAX_TIME - createdAt).padStart(13, '0')}#${runId}`;
}

export function sweepPk(shard: number): string {
  return `SWEEP#${shard}`;
}

/** DynamoDB TTL is epoch seconds; an item is expired once that second has passed. */
export function ttlSeconds(epochMs: number): number {
  return Math.ceil(epochMs / 1000);
}

/** TTL deletion lags (up to days on AWS): readers treat expired items as absent. */
export function isExpired(item: Record<string, unknown>, nowMs: number): boolean {
  const ttl = item[TTL];
  return typeof ttl === 'number' && ttl * 1000 <= nowMs;
}
