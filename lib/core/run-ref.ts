/**
 * A run's identity, in one place: a run is addressed by tenant and id (run ids are scoped by
 * tenant). Errors carry the RunRef itself; how a store keys a run is its adapter's business
 * (lib/adapters/aws/dynamo-keys.ts), so no storage key reaches an error message.
 */
export interface RunRef {
  tenant: string;
  runId: string;
}

export const RUN_ID_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;
export const TENANT_PATTERN = /^[A-Za-z0-9_.@:-]{1,128}$/;

/**
 * A run's name in logs, error messages and in-memory maps: `<tenant>/<runId>`. Neither pattern
 * admits a slash, so two runs never share a name.
 */
export function runName(run: RunRef): string {
  return `${run.tenant}/${run.runId}`;
}

/**
 * The idempotency key of one tool call (`ctx.idempotencyKey`): `<tenant>:<runId>:<callId>`, the
 * same on every attempt of the call, on every worker, before and after a crash.
 */
export function idempotencyKey(run: RunRef, callId: string): string {
  return `${run.tenant}:${run.runId}:${callId}`;
}
