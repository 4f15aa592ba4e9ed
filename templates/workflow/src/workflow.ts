/**
 * A workflow: code around the ops agent. It looks the service up (a step), hands a degraded one
 * to the ops agent (a child run), sleeps (no Lambda is held meanwhile) and looks again. Every
 * operation is recorded in the run's log before the code sees its result; after a crash the
 * function runs again from the top over the recorded results, so nothing runs twice.
 */
import { z } from 'zod';
import { defineWorkflow } from 'logbook';
import type { opsAgent } from './ops-agent.js';
import type { OpsServices } from './services.js';

export function incidentReview(services: OpsServices, ops: ReturnType<typeof opsAgent>) {
  return defineWorkflow({
    name: 'incident-review',
    version: '1.0.0',
    input: z.object({
      service: z.string().min(1),
      /** How long to wait before looking again: ten minutes unless the run is started with less. */
      recheckAfterSeconds: z.number().int().min(1).default(600),
    }),
    output: z.object({ service: z.string(), handedToAgent: z.boolean(), answer: z.string(), statusAfter: z.string() }),
    async run(ctx, input) {
      // A read: run again if a crash cuts it off.
      const before = await ctx.step('look up', (step) => services.lookup(input.service, step.idempotencyKey), { policy: 'rerun' });
      if (before.status === 'healthy') return { service: input.service, handedToAgent: false, answer: 'healthy', statusAfter: before.status };
      // A child run of the ops agent, awaited without holding a Lambda: its answer.
      const answer = await ctx.agent(ops, `${input.service} is degraded (error rate ${before.errorRate}): look at it and restart it if needed.`);
      await ctx.sleep(input.recheckAfterSeconds);
      const after = await ctx.step('look again', (step) => services.lookup(input.service, step.idempotencyKey), { policy: 'rerun' });
      return { service: input.service, handedToAgent: true, answer: typeof answer === 'string' ? answer : JSON.stringify(answer), statusAfter: after.status };
    },
  });
}
