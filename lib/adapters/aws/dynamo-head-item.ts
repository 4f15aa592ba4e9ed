import type { RunHead } from '../../ports/run-heads.js';
import { sweepEntry } from '../../ports/sweep-index.js';
import { HEAD_SK, PK, SK, TTL, parentPk, pk, statusPk, sweepPk, tenantPk, tenantSk, ttlSeconds } from './dynamo-keys.js';
import { TABLE } from './table-definition.js';

/**
 * The head item: every RunHead field is a top-level attribute so that each write touches only
 * its own fields. Two are stored under other names: the lease is flattened into leaseOwner /
 * leaseUntil / leaseEpoch (conditions read them directly), and RunHead.wakeAt is `runWakeAt`
 * because `wakeAt` is the sweep index's sort key (the computed sweep time, not the run's own).
 * `rev` counts head writes; the sweep index repair is conditional on it.
 */
export const A = {
  tenantPk: TABLE.gsi.byTenant.partitionKey,
  tenantSk: TABLE.gsi.byTenant.sortKey,
  statusPk: TABLE.gsi.byTenantStatus.partitionKey,
  parentPk: TABLE.gsi.byParent.partitionKey,
  sweepPk: TABLE.gsi.sweep.partitionKey,
  sweepAt: TABLE.gsi.sweep.sortKey,
  leaseOwner: 'leaseOwner',
  leaseUntil: 'leaseUntil',
  leaseEpoch: 'leaseEpoch',
  runWakeAt: 'runWakeAt',
  rev: 'rev',
  /** Written by each claim: the leaseUntil it replaced, 0 when the lease was free (LeaseGrant.fromReleased). */
  claimedOver: 'claimedOver',
} as const;

export type Item = Record<string, unknown>;

export function sweepAttributes(head: RunHead): { sweepPk: string; wakeAt: number } | undefined {
  const entry = sweepEntry(head);
  return entry ? { sweepPk: sweepPk(entry.shard), wakeAt: entry.wakeAt } : undefined;
}

export function headToItem(head: RunHead): Item {
  const item: Item = {
    [PK]: pk(head),
    [SK]: HEAD_SK,
    [A.tenantPk]: tenantPk(head.tenant),
    [A.tenantSk]: tenantSk(head.createdAt, head.runId),
    [A.statusPk]: statusPk(head.tenant, head.status),
    [A.rev]: 0,
    tenant: head.tenant,
    runId: head.runId,
    agent: head.agent,
    status: head.status,
    lastSeq: head.lastSeq,
    createdAt: head.createdAt,
    updatedAt: head.updatedAt,
    epoch: head.epoch,
    attempts: head.attempts,
    ...(head.stalls ? { stalls: head.stalls } : {}),
    inboxVersion: head.inboxVersion,
    ingestedInboxVersion: head.ingestedInboxVersion,
    usage: head.usage,
    attention: head.attention,
    notifiedSeq: head.notifiedSeq,
    expiresAt: head.expiresAt,
    [TTL]: ttlSeconds(head.expiresAt),
  };
  if (head.lease) {
    item[A.leaseOwner] = head.lease.owner;
    item[A.leaseUntil] = head.lease.until;
    item[A.leaseEpoch] = head.lease.epoch;
  }
  if (head.budgets) item.budgets = head.budgets;
  if (head.parent) {
    item.parent = head.parent;
    item[A.parentPk] = parentPk(head.tenant, head.parent.runId);
  }
  if (head.waits?.length) item.waits = head.waits;
  if (head.park) item.park = head.park;
  if (head.outcome) item.outcome = head.outcome;
  if (head.snapshot) item.snapshot = head.snapshot;
  if (head.wakeAt !== undefined) item[A.runWakeAt] = head.wakeAt;
  if (head.queuedAt !== undefined) item.queuedAt = head.queuedAt;
  if (head.swept) item.swept = head.swept;
  const sweep = sweepAttributes(head);
  if (sweep) {
    item[A.sweepPk] = sweep.sweepPk;
    item[A.sweepAt] = sweep.wakeAt;
  }
  return item;
}

export function itemToHead(item: Item): RunHead {
  const head: RunHead = {
    tenant: item.tenant as string,
    runId: item.runId as string,
    agent: item.agent as RunHead['agent'],
    status: item.status as RunHead['status'],
    lastSeq: item.lastSeq as number,
    createdAt: item.createdAt as number,
    updatedAt: item.updatedAt as number,
    epoch: item.epoch as number,
    attempts: item.attempts as number,
    ...(typeof item.stalls === 'number' && item.stalls > 0 ? { stalls: item.stalls } : {}),
    inboxVersion: item.inboxVersion as number,
    ingestedInboxVersion: item.ingestedInboxVersion as number,
    usage: item.usage as RunHead['usage'],
    attention: (item.attention as RunHead['attention'] | undefined) ?? [],
    notifiedSeq: item.notifiedSeq as number,
    expiresAt: item.expiresAt as number,
  };
  if (typeof item[A.leaseOwner] === 'string') {
    head.lease = {
      owner: item[A.leaseOwner] as string,
      until: item[A.leaseUntil] as number,
      epoch: item[A.leaseEpoch] as number,
    };
  }
  if (item.budgets !== undefined) head.budgets = item.budgets as NonNullable<RunHead['budgets']>;
  if (item.parent !== undefined) head.parent = item.parent as NonNullable<RunHead['parent']>;
  if (Array.isArray(item.waits) && item.waits.length > 0) head.waits = item.waits as NonNullable<RunHead['waits']>;
  if (item.park !== undefined) head.park = item.park as NonNullable<RunHead['park']>;
  if (item.outcome !== undefined) head.outcome = item.outcome as NonNullable<RunHead['outcome']>;
  if (item.snapshot !== undefined) head.snapshot = item.snapshot as NonNullable<RunHead['snapshot']>;
  if (typeof item[A.runWakeAt] === 'number') head.wakeAt = item[A.runWakeAt] as number;
  if (typeof item.queuedAt === 'number') head.queuedAt = item.queuedAt;
  if (item.swept !== undefined) head.swept = item.swept as NonNullable<RunHead['swept']>;
  return head;
}

/** The sweep attributes an item carries now (possibly stale: repaired lazily, see dynamo-sweep). */
export function storedSweep(item: Item): { sweepPk: string; wakeAt: number } | undefined {
  const p = item[A.sweepPk];
  const w = item[A.sweepAt];
  return typeof p === 'string' && typeof w === 'number' ? { sweepPk: p, wakeAt: w } : undefined;
}
