import { fork, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DeleteMessageCommand, GetQueueAttributesCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { childExecArgv, sibling } from './node-flags.js';

export interface RunnerOptions {
  sqs: SQSClient;
  queueUrl: string;
  region: string;
  /** Environment of the worker processes (table, bucket, queue, endpoints...). */
  env: Record<string, string>;
  /** Worker stdout and stderr (its JSON log lines) are appended here. */
  logFile: string;
  /** Parallel worker processes, each handling one message at a time (batch size 1). */
  concurrency?: number;
  /** The worker's function timeout: an invocation running longer is killed, as Lambda does. */
  timeoutMs?: number;
  /** Long-poll wait per ReceiveMessage (seconds). */
  waitSeconds?: number;
}

export interface RunnerStats {
  invocations: number;
  /** Invocations that ended with a response. */
  completed: number;
  /** Records reported as batch item failures (left on the queue for redelivery). */
  itemFailures: number;
  /** Worker processes killed on purpose (chaos) or for a timeout. */
  kills: number;
  timeouts: number;
  /** Worker processes that exited on their own (a handler that had to exit, or a crash). */
  exits: number;
  /** Worker processes started (first start and every restart). */
  starts: number;
  deleted: number;
}

type Pending = { id: number; resolve: (r: InvokeOutcome) => void; timer: NodeJS.Timeout; child: ChildProcess; body: string };
type InvokeOutcome = { kind: 'response'; response: SQSBatchResponse } | { kind: 'error'; message: string } | { kind: 'died'; signal: string | null };

const HOST = fileURLToPath(sibling('worker-host', import.meta.url));

/** One Lambda sandbox: a child process running the worker handler, restarted after it dies. */
class Sandbox {
  private child?: ChildProcess;
  private ready?: Promise<void>;
  private pending?: Pending;
  private nextId = 0;
  busySince?: number;

  constructor(
    private readonly runner: LocalEventSourceRunner,
    private readonly options: Required<Pick<RunnerOptions, 'env' | 'logFile' | 'timeoutMs'>>,
  ) {}

  private start(): Promise<void> {
    if (this.ready && this.child && this.child.exitCode === null && this.child.signalCode === null) return this.ready;
    const fd = openSync(this.options.logFile, 'a');
    const child = fork(HOST, [], {
      execArgv: childExecArgv(),
      env: { ...process.env, ...this.options.env },
      stdio: ['ignore', fd, fd, 'ipc'],
    });
    closeSync(fd);
    this.child = child;
    this.runner.stats.starts++;
    this.ready = new Promise<void>((resolve, reject) => {
      const onMessage = (m: { type?: string }) => {
        if (m?.type === 'ready') {
          child.off('exit', onEarlyExit);
          resolve();
        }
      };
      const onEarlyExit = (code: number | null, signal: string | null) =>
        reject(new Error(`worker process exited during start (code ${code}, signal ${signal}); see ${this.options.logFile}`));
      child.on('message', onMessage);
      child.once('exit', onEarlyExit);
    });
    child.on('message', (m: { type?: string; id?: number; response?: SQSBatchResponse; message?: string }) => {
      const p = this.pending;
      if (!p || m.id !== p.id) return;
      if (m.type === 'result' && m.response) this.settle({ kind: 'response', response: m.response });
      else if (m.type === 'error') this.settle({ kind: 'error', message: m.message ?? 'handler error' });
    });
    child.on('exit', (_code, signal) => {
      if (this.child === child) this.child = undefined;
      if (signal !== 'SIGKILL') this.runner.stats.exits++;
      // Only the invocation that was sent to this very process died with it.
      if (this.pending?.child === child) this.settle({ kind: 'died', signal });
    });
    return this.ready;
  }

  private settle(outcome: InvokeOutcome): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    this.busySince = undefined;
    clearTimeout(p.timer);
    p.resolve(outcome);
  }

  async invoke(event: SQSEvent): Promise<InvokeOutcome> {
    await this.start();
    const child = this.child;
    if (!child) return { kind: 'died', signal: null };
    const id = ++this.nextId;
    return new Promise<InvokeOutcome>((resolve) => {
      const timer = setTimeout(() => {
        this.runner.stats.timeouts++;
        this.kill();
      }, this.options.timeoutMs + 1_000);
      this.pending = { id, resolve, timer, child, body: event.Records[0]?.body ?? '' };
      this.busySince = Date.now();
      child.send({ type: 'invoke', id, event, timeoutMs: this.options.timeoutMs });
    });
  }

  get busy(): boolean {
    return this.pending !== undefined;
  }

  /** The process handling a message now, and that message's body. */
  get busyWith(): { pid: number; body: string } | undefined {
    const p = this.pending;
    return p?.child.pid !== undefined ? { pid: p.child.pid, body: p.body } : undefined;
  }

  /** kill -9, as a crashed host or a Lambda timeout would. */
  kill(): boolean {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return false;
    this.runner.stats.kills++;
    child.kill('SIGKILL');
    // Forget it now, not when its exit event arrives: the next message must go to a fresh
    // process, never to this corpse (which would strand that message for its visibility timeout).
    this.child = undefined;
    this.ready = undefined;
    return true;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGKILL');
    await exited;
  }

  /** Start the process ahead of the first message (a warm sandbox). */
  warm(): Promise<void> {
    return this.start();
  }
}

/**
 * The local stand-in for Lambda's SQS event source mapping: it long-polls the FIFO queue, hands
 * each message to the worker handler as a real SQS event (batch size 1) in a child process,
 * deletes the message unless the handler reported it as a batch item failure, and leaves it on
 * the queue when the process dies (it reappears when its visibility timeout ends, as on AWS).
 */
export class LocalEventSourceRunner {
  readonly stats: RunnerStats = { invocations: 0, completed: 0, itemFailures: 0, kills: 0, timeouts: 0, exits: 0, starts: 0, deleted: 0 };
  private readonly sandboxes: Sandbox[];
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly abort = new AbortController();
  private queueArn = '';

  constructor(private readonly options: RunnerOptions) {
    const sandboxOptions = { env: options.env, logFile: options.logFile, timeoutMs: options.timeoutMs ?? 60_000 };
    this.sandboxes = Array.from({ length: options.concurrency ?? 1 }, () => new Sandbox(this, sandboxOptions));
  }

  async start(): Promise<void> {
    if (this.running) return;
    const attrs = await this.options.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: this.options.queueUrl, AttributeNames: ['QueueArn'] }),
    );
    this.queueArn = attrs.Attributes?.QueueArn ?? `arn:aws:sqs:${this.options.region}:000000000000:queue`;
    await Promise.all(this.sandboxes.map((s) => s.warm()));
    this.running = true;
    this.loops = this.sandboxes.map((s) => this.loop(s));
  }

  async stop(): Promise<void> {
    this.running = false;
    this.abort.abort();
    await Promise.allSettled(this.sandboxes.map((s) => s.stop()));
    await Promise.allSettled(this.loops);
  }

  /** kill -9 one worker process that is handling a message; false when none is. */
  killBusyWorker(pick: (n: number) => number = () => 0): boolean {
    const busy = this.sandboxes.filter((s) => s.busy);
    const victim = busy[pick(busy.length) % Math.max(1, busy.length)];
    return victim ? victim.kill() : false;
  }

  get busyWorkers(): number {
    return this.sandboxes.filter((s) => s.busy).length;
  }

  /** Worker processes handling a message now, with the tick they hold (a test may SIGSTOP one). */
  busyProcesses(): { pid: number; body: string }[] {
    return this.sandboxes.flatMap((s) => (s.busyWith ? [s.busyWith] : []));
  }

  private async loop(sandbox: Sandbox): Promise<void> {
    while (this.running) {
      let messages: Message[] = [];
      try {
        const out = await this.options.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: this.options.queueUrl,
            MaxNumberOfMessages: 1,
            WaitTimeSeconds: this.options.waitSeconds ?? 1,
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: this.abort.signal },
        );
        messages = out.Messages ?? [];
      } catch (error) {
        if (!this.running) return;
        process.emitWarning(`local runner: ReceiveMessage failed: ${(error as Error).message}`);
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      for (const message of messages) {
        if (!this.running) return;
        await this.deliver(sandbox, message);
      }
    }
  }

  private async deliver(sandbox: Sandbox, message: Message): Promise<void> {
    const record = toRecord(message, this.queueArn, this.options.region);
    this.stats.invocations++;
    let outcome: InvokeOutcome;
    const t0 = Date.now();
    try {
      outcome = await sandbox.invoke({ Records: [record] });
    } catch (error) {
      if (this.running) process.emitWarning(`local runner: ${(error as Error).message}`);
      return;
    }
    if (process.env.LOGBOOK_RUNNER_DEBUG) {
      process.stderr.write(`[runner] ${new Date(t0).toISOString().slice(11, 23)} ${record.body} rc=${record.attributes.ApproximateReceiveCount} -> ${outcome.kind} in ${Date.now() - t0} ms\n`);
    }
    if (outcome.kind !== 'response') return; // died or threw: the message comes back after its visibility timeout
    this.stats.completed++;
    const failed = new Set(outcome.response.batchItemFailures?.map((f) => f.itemIdentifier) ?? []);
    if (failed.has(record.messageId)) {
      this.stats.itemFailures++;
      return;
    }
    try {
      await this.options.sqs.send(new DeleteMessageCommand({ QueueUrl: this.options.queueUrl, ReceiptHandle: record.receiptHandle }));
      this.stats.deleted++;
    } catch (error) {
      if (this.running) process.emitWarning(`local runner: DeleteMessage failed: ${(error as Error).message}`);
    }
  }
}

/** An SQS message as Lambda's event source mapping presents it. */
export function toRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const a = message.Attributes ?? {};
  const messageAttributes: SQSRecord['messageAttributes'] = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      dataType: value.DataType ?? 'String',
      ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
    };
  }
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
      SentTimestamp: a.SentTimestamp ?? String(Date.now()),
      SenderId: a.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      ...(a.SequenceNumber ? { SequenceNumber: a.SequenceNumber } : {}),
      ...(a.MessageGroupId ? { MessageGroupId: a.MessageGroupId } : {}),
      ...(a.MessageDeduplicationId ? { MessageDeduplicationId: a.MessageDeduplicationId } : {}),
    },
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}
