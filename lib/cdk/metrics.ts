/**
 * Custom CloudWatch metrics the runtime emits (Embedded Metric Format, e.g. Powertools Metrics)
 * and the stack alarms on. The stack sets POWERTOOLS_METRICS_NAMESPACE and POWERTOOLS_SERVICE_NAME
 * on every function, so a handler that uses Powertools defaults lands in exactly the namespace and
 * dimension below. CloudWatch alarms match a metric's full dimension set: emit these metrics with
 * the `service` dimension only, or the alarms silently never fire.
 */
export const METRICS = {
  namespace: 'Logbook',
  /** Powertools' default dimension name; its value is the function's POWERTOOLS_SERVICE_NAME. */
  serviceDimension: 'service',
  names: {
    /** Count, worker: a tick that claimed the lease but appended and ingested nothing. */
    ticksWithoutProgress: 'TicksWithoutProgress',
    /** Count, worker: model turns completed (one model_response appended). */
    turns: 'Turns',
    /**
     * Value, worker, once per tick: how many ticks this run has had so far (a counter on its head).
     * The alarm uses its Maximum, so one runaway run trips it, however many healthy runs there are.
     */
    invocationsPerRun: 'InvocationsPerRun',
    /** Count, worker: a run parked (attention_required, poisoned, missing version, budget). */
    runsParked: 'RunsParked',
  },
} as const;

/** POWERTOOLS_SERVICE_NAME of each function; the worker's is the one the alarms select. */
export const SERVICE_NAMES = {
  worker: 'logbook-worker',
  api: 'logbook-api',
  trigger: 'logbook-trigger',
  sweeper: 'logbook-sweeper',
  /** The optional SSE function behind the streaming function URL (`streamUrl`). */
  stream: 'logbook-stream',
  /** The schedule function, deployed when the agents or workflows have a schedule. */
  schedule: 'logbook-schedule',
} as const;
