import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

/** A Lambda context as the runtime hands it to a handler, with the invocation's real deadline. */
export function lambdaContext(functionName: string, timeoutMs: number, now = Date.now()): Context {
  const deadline = now + timeoutMs;
  const requestId = randomUUID();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/${process.pid}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
