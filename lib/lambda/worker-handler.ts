import type { Context, SQSBatchItemFailure, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { HINT_ATTRIBUTE, parseTick, parseTickHint } from '../adapters/aws/tick.js';
import { ValidationError, errorCode, errorMessage } from '../core/errors.js';
import { MAX_RECEIVE_COUNT, TRACE_FLUSH_MS, tickVisibilitySeconds } from '../core/limits.js';
import { runStep, type StepResult } from '../engine/step-runner.js';
import type { Tick } from '../ports/step-queue.js';
import { METRIC, addCount, flushMetrics } from './telemetry.js';
import type { Runtime } from './wiring.js';

/** Runs a fresh tick cannot move on: a tick at its last delivery is simply dropped for them. */
const SETTLED = new Set(['completed', 'failed', 'cancelled', 'parked']);

export interface WorkerHandlerOptions {
  /** Called after the response is ready when a tool ignored its abort (default: exit the process). */
  exitProcess?: () => void;
}

/**
 * The worker: SQS FIFO event source, batch size 1. A malformed body is logged and dropped; a run
 * held by another live worker is retried when that lease ends (batch item failure with the
 * visibility set to match); an unexpected error is a batch item failure, redelivered after the
 * shortened visibility, and the run's attempts counter parks it as poisoned if it keeps failing.
 * Each delivery of a tick that earlier deliveries did not finish waits longer (limits.ts back-off),
 * and the last one SQS makes hands the run to a fresh tick: a run's tick never reaches the DLQ
 * because workers kept dying on it; the run's own poison counters decide.
 */
export function workerHandlerFor(getRuntime: () => Promise<Runtime>, options: WorkerHandlerOptions = {}) {
  const exitProcess = options.exitProcess ?? (() => setTimeout(() => process.exit(1), 100));
  return async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
    const runtime = await getRuntime();
    const failures: SQSBatchItemFailure[] = [];
    let mustExit = false;
    try {
      for (const record of event.Records) {
        const outcome = await handleRecord(runtime, record, context);
        if (outcome.failed) failures.push({ itemIdentifier: record.messageId });
        if (outcome.mustExit) mustExit = true;
      }
    } finally {
      runtime.logger.resetKeys();
      flushMetrics(runtime.metrics);
      // No flush of spans here: each step sent its spans before it released its run. What it
      // recorded after (its release span) stays buffered while the sandbox is frozen and goes out
      // with the next invocation's (one request a step, not two; lost only with the container).
      // The GenAI metrics are recorded after the head write, so they go now, before the sandbox freezes.
      if (runtime.tracer?.metrics) await sendMetrics(runtime);
    }
    if (mustExit) {
      runtime.logger.error('a tool ignored its abort: exiting the process after this response', { failures: failures.length });
      exitProcess();
    }
    return { batchItemFailures: failures };
  };
}

/** The invocation's GenAI metrics, waited for at most TRACE_FLUSH_MS: an unreachable collector slows the response, never fails it. */
async function sendMetrics(runtime: Runtime): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), TRACE_FLUSH_MS)));
  try {
    const sent = await Promise.race([runtime.tracer?.flushMetrics().then(() => 'sent' as const), timeout]);
    if (sent === 'timeout') runtime.logger.warn('metrics not sent in time: the invocation returns', { waitedMs: TRACE_FLUSH_MS });
  } catch (error) {
    runtime.logger.warn('metrics not sent', { error: errorMessage(error) });
  } finally {
    clearTimeout(timer);
  }
}

async function handleRecord(runtime: Runtime, record: SQSRecord, context: Context): Promise<{ failed: boolean; mustExit: boolean }> {
  const { logger, metrics, engine, visibility } = runtime;
  logger.resetKeys();
  let tick: Tick;
  try {
    tick = parseTick(record.body);
  } catch (error) {
    // Dropped: redelivering a body that can never parse would only fill the DLQ.
    const issues = error instanceof ValidationError ? error.issues : [];
    logger.error('malformed tick dropped', { messageId: record.messageId, reason: errorMessage(error), issues, bodyBytes: record.body.length });
    addCount(metrics, METRIC.MalformedTicks);
    return { failed: false, mustExit: false };
  }
  logger.appendKeys({ tenant: tick.tenant, runId: tick.runId });
  // A crashed worker's tick comes back soon after its lease ends; later for each delivery of it
  // that did not finish before (back-off: a FIFO queue takes no per-message delay, so visibility).
  const receiveCount = Number(record.attributes.ApproximateReceiveCount) || 1;
  // Where to read from, beside the body: lets a cold container read while it claims. Only on a
  // first delivery: a tick that comes back may belong to a run whose reads kill its worker, and
  // without the hint the claim and the head gate (which parks such a run) come before any read.
  const hint = receiveCount === 1 ? parseTickHint(record.messageAttributes?.[HINT_ATTRIBUTE]?.stringValue) : undefined;
  if (hint) tick = { ...tick, hint };
  const visibilitySeconds = tickVisibilitySeconds(
    engine.config.leaseMs,
    runtime.env.LOGBOOK_VISIBILITY_MARGIN_S,
    receiveCount,
    runtime.env.LOGBOOK_BACKOFF_BASE_S,
  );
  if (receiveCount > 1) logger.info('tick redelivered; backing off before the next delivery', { receiveCount, visibilitySeconds });
  const setVisibility = async (seconds: number) => {
    try {
      await visibility.setVisibility(record.receiptHandle, seconds);
    } catch (error) {
      logger.warn('could not change tick visibility', { messageId: record.messageId, code: errorCode(error) });
    }
  };
  // First thing, beside the claim (the two do not depend on each other, and one round trip less
  // is most of a warm step's latency): a worker killed from here on costs at most lease + margin,
  // not the queue's timeout. Any later visibility change waits for this one, so none is overtaken.
  const shortened = setVisibility(visibilitySeconds);
  if (receiveCount >= MAX_RECEIVE_COUNT) {
    await shortened;
    // The last delivery SQS makes before the DLQ: hand the run to a fresh tick instead of risking
    // this one (limits.ts). The run's own counters (claim attempts, stalls, crashed tool starts)
    // live on its head and log, so a poison run still parks; only the tick is replaced.
    const head = await engine.heads.getHead(tick);
    if (head && !SETTLED.has(head.status)) {
      await engine.queue.enqueue(tick, { dedupeId: `${tick.runId}:handover:${head.epoch}` });
      logger.warn('tick at its last delivery: handed to a fresh tick before the DLQ', { receiveCount, epoch: head.epoch });
      return { failed: false, mustExit: false };
    }
  }

  let result: StepResult;
  try {
    result = await runStep(engine, tick, {
      owner: `${context.awsRequestId}`,
      deadlineAt: Date.now() + context.getRemainingTimeInMillis(),
      onLeaseRenewed: () => shortened.then(() => setVisibility(visibilitySeconds)),
    });
  } catch (error) {
    await shortened;
    logger.error('step failed; the tick will be redelivered', { code: errorCode(error), message: errorMessage(error) });
    return { failed: true, mustExit: false };
  }
  await shortened;
  logger.appendKeys({ ...(result.lastSeq !== undefined ? { seq: result.lastSeq } : {}) });
  // Every tick that claimed the run: the alarm takes the Maximum, so one runaway run trips it.
  if (result.epoch !== undefined) addCount(metrics, METRIC.InvocationsPerRun, result.epoch);
  const fields = { outcome: result.outcome, appended: result.appended, turns: result.turns };
  switch (result.outcome) {
    case 'busy': {
      // Another worker holds a live lease: come back when it ends, without counting as progress.
      const seconds = Math.ceil((result.retryAfterMs ?? 1000) / 1000);
      await setVisibility(seconds);
      logger.info('run busy; retrying later', { ...fields, retryAfterSeconds: seconds });
      return { failed: true, mustExit: Boolean(result.mustExitProcess) };
    }
    case 'not_found':
      logger.warn('tick for an unknown run dropped', fields);
      break;
    case 'ended':
      logger.info('run ended', fields);
      break;
    case 'poisoned':
    case 'corrupt':
      logger.error('run parked on its head', fields);
      break;
    case 'fenced':
    case 'lease_lost':
      logger.warn('another worker took over the run; stopped', fields);
      break;
    default:
      logger.info('step done', fields);
  }
  return { failed: false, mustExit: Boolean(result.mustExitProcess) };
}
