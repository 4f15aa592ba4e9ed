/**
 * Child process entry of the local event-source runner: it plays the Lambda runtime for the worker
 * handler. The parent sends SQS-shaped events over IPC; this process invokes the same `handler`
 * that Lambda runs and sends back its response. The parent may kill -9 it at any moment, exactly
 * like a crashed or timed-out Lambda sandbox.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createWorkerHandler } from '../../lib/lambda/index.js';
import { loadAgentsModule } from './agents-module.js';
import { lambdaContext } from './lambda-context.js';

interface InvokeMessage {
  type: 'invoke';
  id: number;
  event: SQSEvent;
  timeoutMs: number;
}

const send = (message: unknown) => process.send?.(message);

const agentsModule = process.env.LOGBOOK_AGENTS_MODULE;
if (!agentsModule) throw new Error('worker host: LOGBOOK_AGENTS_MODULE is not set');
// The same handler factory the application's Lambda handler file calls, on the same agents.
const handler: ((event: SQSEvent, context: ReturnType<typeof lambdaContext>) => Promise<SQSBatchResponse>) & { warm(): Promise<void> } =
  createWorkerHandler({ agents: () => loadAgentsModule(agentsModule) });
// As an init phase: the sandbox takes events only once its runtime is built.
await handler.warm();

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
