/**
 * Child process entry of the local event-source runner: it plays the Lambda runtime for the worker
 * handler. The parent sends SQS-shaped events over IPC; this process invokes the same `handler`
 * that Lambda runs and sends back its response. The parent may kill -9 it at any moment, exactly
 * like a crashed or timed-out Lambda sandbox.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lambdaContext } from './lambda-context.js';

interface InvokeMessage {
  type: 'invoke';
  id: number;
  event: SQSEvent;
  timeoutMs: number;
}

const send = (message: unknown) => process.send?.(message);

const { handler, warm } = (await import('../../functions/worker.js')) as {
  handler: (event: SQSEvent, context: ReturnType<typeof lambdaContext>) => Promise<SQSBatchResponse>;
  warm: () => Promise<void>;
};
// As an init phase: the sandbox takes events only once its runtime is built.
await warm();

process.on('message', (message: InvokeMessage) => {
  if (message?.type !== 'invoke') return;
  const context = lambdaContext(process.env.LOGBOOK_FUNCTION_NAME ?? 'logbook-worker', message.timeoutMs);
  handler(message.event, context).then(
    (response) => send({ type: 'result', id: message.id, response }),
    (error: unknown) => send({ type: 'error', id: message.id, message: error instanceof Error ? error.message : String(error) }),
  );
});
// The parent going away ends us too: a local sandbox never outlives its runner.
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
