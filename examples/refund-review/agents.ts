/**
 * The refund review app's agents module: the refund-review workflow and its classifier agent,
 * what its handlers, its CDK app and `logbook dev` load. The fake services record every request in
 * REFUND_LEDGER_FILE when it is set (the local stack runs workers as processes it kills: the
 * record must outlive them), in memory otherwise; REFUND_SERVICE_DELAY_MS slows every call.
 */
import { defineAgents, type Agents } from 'logbook';
import { FileLedger, MemoryLedger } from '../support-agent/ledger.js';
import { CLASSIFIER_MODEL_ID, classifier, classifierModel, refundReview } from './refund-review.js';
import { RefundServices } from './refund-services.js';

export function createRefundAgents(env: Record<string, string | undefined> = process.env): Agents {
  const ledger = env.REFUND_LEDGER_FILE ? new FileLedger(env.REFUND_LEDGER_FILE) : new MemoryLedger();
  const services = new RefundServices(ledger, Number(env.REFUND_SERVICE_DELAY_MS ?? 0) || 0);
  return defineAgents({
    agents: [classifier],
    workflows: [refundReview(services)],
    models: { [CLASSIFIER_MODEL_ID]: () => classifierModel() },
  });
}

/** Built once per cold start, from that process's environment. */
export default () => createRefundAgents();
