/**
 * Every number that the engine, the adapters, the Lambda environment and the CDK constructs must
 * agree on, in one place. Numbers that follow from others are computed here, never restated:
 * change the worker timeout and the longest tool, the queue's visibility and the checks in
 * test/unit/core/limits.test.ts follow.
 */

/**
 * Levels of arrays and objects a value from outside may nest: request bodies and the arguments of
 * a model's tool calls. Deeper values are refused before any recursive code (hashing,
 * JSON.stringify, which overflows near 5,000 levels) sees them.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The highest per-tenant limit of unfinished runs a deployment may set: the admission set of a
 * tenant is one DynamoDB item, and 1,000 run ids of at most 80 characters stay far below 400 KB.
 */
export const MAX_ACTIVE_RUNS_LIMIT = 1_000;

/** Lambda timeout of the worker function (seconds, as Lambda takes it). */
export const WORKER_TIMEOUT_S = 300;
export const WORKER_TIMEOUT_MS = WORKER_TIMEOUT_S * 1000;

/**
 * Lease length. The heartbeat renews it (and the tick's visibility) every third of it, so a
 * crashed worker's run is free again at most one lease after its last renewal.
 */
export const LEASE_MS = 60_000;
export const LEASE_RENEWALS_PER_LEASE = 3;

/** Kept free before the lease or the invocation ends: no model or tool call starts inside it. */
export const MARGIN_MS = 5_000;

/**
 * A workflow's wait shorter than this (a step's retry back-off, a short ctx.sleep) is slept in the
 * worker, holding its Lambda that long at most, rather than ending the step and waiting for the
 * sweeper's next pass (a minute on AWS). Longer waits hold nothing.
 */
export const IN_PROCESS_WAIT_MS = 5_000;

/** Upper bound of one model call, for the time-left check before it starts. */
export const MODEL_TIMEOUT_MS = 120_000;

/**
 * Room an invocation needs besides the tool call itself: claim, load, ingest, append the started
 * marker and the result, project, publish, release. It sets the longest tool a fresh
 * invocation can still run to its deadline.
 */
export const TOOL_ROOM_MS = 60_000;
/** The longest `timeoutMs` a tool may declare. */
export const MAX_TOOL_TIMEOUT_MS = WORKER_TIMEOUT_MS - TOOL_ROOM_MS;
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

/**
 * Deliveries of a tick before SQS moves it to the dead-letter queue. AWS asks for at least 5
 * when a Lambda function consumes the queue.
 */
export const MAX_RECEIVE_COUNT = 5;
/**
 * Poison versus chaos. A run is poison when its worker dies in the same place every time; a kill
 * storm kills workers anywhere. The head counts the two places a claim can die before it makes
 * progress (appends or ingests an event, or releases the lease normally) apart:
 * - `attempts`: claims since the last one that got the run loaded. Each delivery claims once, so
 *   a run whose load kills its worker is claimed MAX_CLAIM_ATTEMPTS times and parked by the next
 *   claim, delivery MAX_CLAIM_ATTEMPTS + 1 = 4 <= MAX_RECEIVE_COUNT: before the DLQ.
 * - `stalls`: claims in a row that loaded the run and died before making progress. A claim that
 *   loads in a streak (attempts > 1 or stalls > 0) marks the head once (attempts := 0, stalls + 1,
 *   or 1 when a death before loading came in between): a normal step pays no write for this. The first claim of a streak is not marked (nobody knew it
 *   was a streak), so a run that dies after loading every time is marked by claims 2..4 and
 *   parked by claim MAX_STALLED_CLAIMS + 2 = 5 <= MAX_RECEIVE_COUNT: still before the DLQ.
 * A kill storm resets `attempts` whenever one claim gets past its load, and needs
 * MAX_STALLED_CLAIMS consecutive kills inside the few milliseconds between a load and the first
 * append (or a waiting step's release) to look like poison. test/unit/core/limits.test.ts
 * checks both sums.
 */
export const MAX_CLAIM_ATTEMPTS = 3;
/** The highest poison limit a deployment may configure (LOGBOOK_MAX_ATTEMPTS). */
export const MAX_CLAIM_ATTEMPTS_LIMIT = MAX_RECEIVE_COUNT - 1;
/** Marked claims that loaded the run and died without progress before it parks as poisoned. */
export const MAX_STALLED_CLAIMS = MAX_RECEIVE_COUNT - 2;

/**
 * Starts in a row of a read-only (`rerun`) call that ended with no result at all (the worker died
 * or lost its lease inside the call) before the call parks for a person (`tool_attempts_exhausted`).
 * A tool that fails gets its error result at once; a call that keeps dying with its worker never
 * gets one: the model would answer an error the infrastructure made up, and the run's answer
 * would change because of a kill storm. A person who answers rerun gives it as many again.
 * When every delivery of one tick reruns the call and dies (the call's deadline and grace have
 * passed by the time the tick comes back), delivery MAX_CRASHED_TOOL_ATTEMPTS + 1 parks the run:
 * still a delivery SQS makes before the DLQ (test/unit/core/limits.test.ts).
 */
export const MAX_CRASHED_TOOL_ATTEMPTS = MAX_RECEIVE_COUNT - 1;

/**
 * The step queue's visibility timeout: AWS wants at least six times the function timeout for a
 * Lambda event source, because its poller retries throttled invocations within it.
 */
export const STEP_QUEUE_VISIBILITY_S = 6 * WORKER_TIMEOUT_S;
/**
 * A worker shortens its tick's visibility to lease + this (seconds) first thing, and keeps it
 * there with every renewal: a crashed step's tick comes back soon after its lease ends.
 */
export const VISIBILITY_MARGIN_S = 10;

/**
 * Back-off between deliveries of a tick whose earlier deliveries did not finish (the worker died,
 * or the step threw): SQS FIFO queues take no per-message DelaySeconds, so the worker sets the
 * visibility of the tick it holds (ChangeMessageVisibility) from the tick's receive count. The
 * first delivery keeps lease + margin; delivery n waits lease × 2^(n-1) + margin, so a burst of
 * infrastructure failures has passed before the run's poison counters (attempts, stalls, crashed
 * tool starts) run out, while a poison run still parks within MAX_RECEIVE_COUNT deliveries.
 * Deliveries can also die where no counter sees them (before the claim, or after an append), so
 * the last delivery SQS makes (MAX_RECEIVE_COUNT) does not step: the worker hands the run to a
 * fresh tick (worker-handler.ts). The counters live on the head and in the log, so they carry
 * over to the fresh tick, and a run's tick never reaches the DLQ because its workers died.
 */
export const BACKOFF_FACTOR = 2;
/** The longest visibility SQS accepts (12 hours). */
export const SQS_MAX_VISIBILITY_S = 12 * 3600;
/** How long the step queue keeps a message (the CDK and the local stack set it). */
export const STEP_QUEUE_RETENTION_S = 4 * 86_400;

/**
 * Extra seconds delivery `receiveCount` of a tick waits before the next one, beyond lease +
 * margin: base × (2^(n-1) - 1), the base being the lease unless a deployment sets it.
 */
export function tickBackoffSeconds(leaseMs: number, receiveCount: number, baseS: number = Math.ceil(leaseMs / 1000)): number {
  const n = Math.min(Math.max(1, Math.floor(receiveCount)), MAX_RECEIVE_COUNT) - 1;
  return baseS * (BACKOFF_FACTOR ** n - 1);
}

/**
 * The visibility a worker gives the tick it is processing, for a lease of `leaseMs`: the tick
 * comes back after the lease of a worker that died holding it has ended (never a wasted "busy"
 * delivery), later for each delivery before it that did not finish.
 */
export function tickVisibilitySeconds(leaseMs: number, marginS: number = VISIBILITY_MARGIN_S, receiveCount = 1, backoffBaseS?: number): number {
  return Math.min(SQS_MAX_VISIBILITY_S, Math.ceil(leaseMs / 1000) + marginS + tickBackoffSeconds(leaseMs, receiveCount, backoffBaseS));
}

/**
 * From a tick's first delivery to its last one (MAX_RECEIVE_COUNT) when every worker dies holding
 * it: the longest a poison run takes to park, which the queue's retention must exceed.
 */
export function worstCasePoisonSeconds(leaseMs: number, marginS: number = VISIBILITY_MARGIN_S): number {
  let total = 0;
  for (let n = 1; n < MAX_RECEIVE_COUNT; n++) total += tickVisibilitySeconds(leaseMs, marginS, n);
  return total;
}

/**
 * Streaming a model call's text (stream-publisher.ts). Deltas are batched: a chunk is written
 * once STREAM_FLUSH_MS have passed since the last write began, or at once when STREAM_FLUSH_CHARS
 * are waiting, whichever comes first, and never two at a time. So a run streams at most
 * 1000 / STREAM_FLUSH_MS = 4 writes a second (plus the first chunk, written at once) for any
 * model writing under STREAM_FLUSH_CHARS * 4 characters a second (~2,000 tokens/s).
 */
export const STREAM_FLUSH_MS = 250;
export const STREAM_FLUSH_CHARS = 2_048;
/** The most text one chunk item holds (UTF-16 units): 4 bytes each stays far below DynamoDB's 400 KB item. */
export const STREAM_MAX_CHUNK_CHARS = 16_384;
/**
 * How long a chunk is kept (its TTL). A chunk is a preview of a call that lasts at most
 * MODEL_TIMEOUT_MS, and the call's model_response supersedes it, so an hour outlives any reader
 * that could still want it; the log keeps the text for the run's retention.
 */
export const STREAM_RETENTION_MS = 3_600_000;
/**
 * The longest the final flush (the text still buffered when the call returns, written before its
 * model_response is appended) may hold the append up: a preview never delays the log by more.
 */
export const STREAM_FINAL_FLUSH_MS = 2_000;

/**
 * Reads that wait which one tenant may hold open at once on one API server: long polls of
 * GET /runs/{id}/events and /stream (waitSeconds > 0) and SSE connections. Each polls the store
 * while it waits, so without a cap a few hundred open readers slow every other request of the
 * server (200 of them made GET /runs ten times slower on the local stack). A reader over the cap
 * gets 429 with Retry-After OPEN_STREAMS_RETRY_AFTER_S; reads that do not wait are never capped.
 * On Lambda each API instance serves one request at a time, so there the cap is the function's
 * concurrency and the stage's throttling.
 */
export const MAX_OPEN_STREAMS_PER_TENANT = 32;
export const OPEN_STREAMS_RETRY_AFTER_S = 5;

/**
 * Largest attachment (image or document) an upload may carry, in bytes. Bedrock Converse takes
 * images up to 3.75 MB and documents up to 4.5 MB; one limit for both, the lower, because the
 * upload reaches the API function base64-encoded inside Lambda's 6 MB request payload (3.75 MB
 * is 5 MB of base64, which leaves room for the event around it) and a document limit above the
 * image one would let through files some model of the same deployment refuses.
 */
export const MAX_ATTACHMENT_BYTES = 3_750_000;

/** Attachments one message may carry, per kind: what Bedrock Converse takes in one request's message. */
export const MAX_ATTACHMENTS_PER_MESSAGE = { image: 20, document: 5 } as const;

/**
 * Tracing (engine/tracing): a step waits at most this long for its spans to be sent before it
 * releases its run (an unreachable collector slows a step by this much, never fails it).
 */
export const TRACE_FLUSH_MS = 2_000;

/** Characters of a prompt or tool payload put on a span when the application opts in (tracing payloads). */
export const TRACE_PAYLOAD_MAX_CHARS = 4_096;
