import type { Admission } from '../../ports/admission.js';
import type { RunRef } from '../../core/run-ref.js';

/** The admission set per tenant, in memory, with DynamoDB's semantics (see DynamoAdmission). */
export class MemoryAdmission implements Admission {
  private readonly tenants = new Map<string, Set<string>>();

  async admit(run: RunRef, max: number): Promise<boolean> {
    const set = this.tenants.get(run.tenant) ?? new Set<string>();
    if (!set.has(run.runId) && set.size >= max) return false;
    set.add(run.runId);
    this.tenants.set(run.tenant, set);
    return true;
  }

  async release(run: RunRef): Promise<void> {
    this.tenants.get(run.tenant)?.delete(run.runId);
  }

  async holders(tenant: string): Promise<string[]> {
    return [...(this.tenants.get(tenant) ?? [])].sort();
  }
}
