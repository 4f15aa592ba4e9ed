/** A run is addressed by tenant and id: run ids are scoped by tenant. */
export interface RunRef {
  tenant: string;
  runId: string;
}

export const RUN_ID_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;
export const TENANT_PATTERN = /^[A-Za-z0-9_.@:-]{1,128}$/;

export function runKey(run: RunRef): string {
  return `RUN#${run.tenant}#${run.runId}`;
}
