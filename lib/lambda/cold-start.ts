import { createRuntime, type Runtime, type RuntimeOptions } from './wiring.js';

/** One runtime per process (cold start); a failed start is retried on the next invocation. */
export function runtimeOnce(serviceName: string, options: RuntimeOptions = {}): () => Promise<Runtime> {
  let runtime: Promise<Runtime> | undefined;
  return () => {
    runtime ??= createRuntime(serviceName, options).catch((error: unknown) => {
      runtime = undefined;
      throw error;
    });
    return runtime;
  };
}
