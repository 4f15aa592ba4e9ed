import { createRuntime, type Runtime } from './wiring.js';

/** One runtime per process (cold start); a failed start is retried on the next invocation. */
export function runtimeOnce(serviceName: string): () => Promise<Runtime> {
  let runtime: Promise<Runtime> | undefined;
  return () => {
    runtime ??= createRuntime(serviceName).catch((error: unknown) => {
      runtime = undefined;
      throw error;
    });
    return runtime;
  };
}
