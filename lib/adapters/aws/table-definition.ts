/**
 * The one description of Logbook's DynamoDB table, bucket and queues. The CDK stack and the local
 * stack both build their resources from it, so local is the same shape as AWS.
 */
export const TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** TTL attribute, epoch seconds. */
  ttlAttribute: 'expiresAtSec',
  /**
   * The GSIs project keys only: listing and sweeping read each head they return with a consistent
   * GetItem. With ALL, every head write (claim, projection, release: three per step) was copied
   * into each index the head is in, 1 write unit per index per write; with KEYS_ONLY an index is
   * written only when its own keys change (a status change, a sweep-entry repair), which a step
   * rarely does. A listed or swept head costs one more read unit, paid by the rare reader.
   */
  gsiProjection: 'KEYS_ONLY',
  gsi: {
    /** All runs of a tenant, newest first. */
    byTenant: { name: 'byTenant', partitionKey: 'tenantPk', sortKey: 'tenantSk' },
    /** Runs of a tenant in one status, newest first. */
    byTenantStatus: { name: 'byTenantStatus', partitionKey: 'statusPk', sortKey: 'tenantSk' },
    /** Sparse: child runs (agentTool) of one parent run, newest first. Only child heads carry the key. */
    byParent: { name: 'byParent', partitionKey: 'parentPk', sortKey: 'tenantSk' },
    /** Sparse sweeper index: present only on heads that may need a wake-up. */
    sweep: { name: 'sweep', partitionKey: 'sweepPk', sortKey: 'wakeAt' },
  },
} as const;

/** Attribute types of the keys above (S = string, N = number). */
export const KEY_ATTRIBUTE_TYPES: Record<string, 'S' | 'N'> = {
  pk: 'S',
  sk: 'S',
  tenantPk: 'S',
  tenantSk: 'S',
  statusPk: 'S',
  parentPk: 'S',
  sweepPk: 'S',
  wakeAt: 'N',
};

/** Queue names; the timings and the receive count are in lib/core/limits.ts. */
export const QUEUES = {
  steps: { name: 'logbook-steps.fifo' },
  deadLetter: { name: 'logbook-steps-dlq.fifo' },
} as const;

/** Retention defaults (days), configurable per deployment. */
export const RETENTION = {
  completedDays: 30,
  failedOrParkedDays: 90,
  /** Events and blobs live until the run's deadline plus this. */
  eventsDays: 90,
} as const;
