import { StaticModelResolver } from 'logbook';
import { AgentRegistry, requestApproval, requestMessage, requestSignal } from 'logbook/engine';
import { ManualClock, memoryStorage, type HarnessScenario, type Outside, type WorldStorage } from 'logbook/testing';
import { GUARDED_MODEL_ID, guardedAgent, guardedModel } from './guarded-agent.js';
import { MemoryLedger, type Ledger, type SideEffect } from './ledger.js';
import { SupportServices } from './services.js';
import { ledgerResolver, type SupportWorld } from './support-world.js';

/** A fresh world running `support-guarded` on in-memory storage (or the storage given). */
export function guardedWorld(storage: WorldStorage = memoryStorage(), ledger: Ledger = new MemoryLedger()): SupportWorld {
  // The services keep time by the world's clock: they refuse a request past its deadline.
  const clock = new ManualClock();
  const services = new SupportServices(ledger, { now: () => clock.now() });
  return {
    storage,
    clock,
    registry: new AgentRegistry().register(guardedAgent(services)),
    models: new StaticModelResolver({ [GUARDED_MODEL_ID]: guardedModel() }),
    ledger,
    services,
  };
}

const PARCEL = { trackingId: 'TRK-1', condition: 'damaged' as const };
const FOLLOW_UP = { input: 'Thanks! When does the money arrive?', messageId: 'followup-1' };

/** A request refused because it is already done (or not needed any more) is nothing to send. */
function sent(request: Promise<unknown>): Promise<boolean> {
  return request.then(
    () => true,
    (error: unknown) => {
      if (typeof (error as { code?: unknown }).code === 'string' && (error as { code: string }).code.endsWith('_conflict')) return false;
      throw error;
    },
  );
}

/**
 * The outside world of a support-guarded run, as the harness drives it: the warehouse signals the
 * returned parcel, a person approves the refund with an edit (refund $10 of $12.99), and the
 * customer writes back once after the answer. Each looks at the head (and the log) first, so
 * asking again after a crash is harmless.
 */
export function guardedOutside(): Outside {
  return async (head, deps) => {
    const run = { tenant: head.tenant, runId: head.runId };
    for (const wait of head.waits ?? []) {
      if (wait.kind === 'signal' && wait.signal) return sent(requestSignal(deps, run, { signal: wait.signal, payload: PARCEL }, 'warehouse'));
      if (wait.kind === 'approval') {
        const event = (await deps.log.readOne(run, Number(wait.callId.split('-')[0]))) as { calls?: { callId: string; args: { value?: { orderId?: string } } }[] };
        const orderId = event.calls?.find((c) => c.callId === wait.callId)?.args.value?.orderId ?? 'o_unknown';
        return sent(requestApproval(deps, run, { callId: wait.callId, decision: 'edit', args: { orderId, amountCents: 1000 }, comment: 'refund $10 of $12.99' }, 'alice'));
      }
    }
    if (head.status !== 'completed') return false;
    const page = await deps.log.read(run, { afterSeq: 0 });
    const answered = page.events.some((e) => (e as { inboxId?: string }).inboxId === `message-${FOLLOW_UP.messageId}`);
    return answered ? false : sent(requestMessage(deps, run, FOLLOW_UP, 'c_77'));
  };
}

/** The harness scenario for control over runs: a signal wait, an edited approval and a follow-up. */
export const guardedScenario: HarnessScenario<SupportWorld, SideEffect> = {
  name: 'support-guarded (signal wait, approval with edit, follow-up message)',
  world: () => guardedWorld(),
  request: { tenant: 'acme', runId: 'harness-g', agent: 'support-guarded', input: 'Customer c_77 reports a damaged order. Sort it out.' },
  sideEffects: (world) => world.ledger.all(),
  onceKey: (e) => (e.readOnly || !e.applied ? undefined : `${e.service}:${e.op}:${e.key}`),
  resolver: (world) => ledgerResolver(world),
  outside: () => guardedOutside(),
};
