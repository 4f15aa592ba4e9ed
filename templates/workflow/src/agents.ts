/**
 * Your agents module: what the Lambda handlers, the CDK app, `logbook dev` and the tests load.
 * Its default export is `defineAgents(...)`: the ops agent and the incident-review workflow that
 * calls it (`npx logbook runs start incident-review --input '{"service":"checkout"}'`).
 */
import { ScriptedModel, defineAgents, type Agents } from 'logbook';
import { MODEL_ID, opsAgent, opsScript } from './ops-agent.js';
import { serviceState } from './service-state.js';
import { OpsServices, emptyOpsState } from './services.js';
import { incidentReview } from './workflow.js';

export { MODEL_ID, opsAgent, opsScript, opsTools } from './ops-agent.js';

export function createAgents(services = new OpsServices(), env: Record<string, string | undefined> = process.env): Agents {
  const ops = opsAgent(services, env);
  return defineAgents({
    agents: [ops],
    workflows: [incidentReview(services, ops)],
    models: { [MODEL_ID]: () => new ScriptedModel(opsScript()) },
  });
}

/**
 * Built once per process (a Lambda cold start, a `logbook dev` worker). Under `logbook dev` the fake
 * services keep their state in .logbook/ops-services.json, shared by its worker processes, so a
 * call retried after a killed worker is deduplicated as a real service would; elsewhere, in memory.
 */
export default createAgents(new OpsServices(serviceState('ops-services', emptyOpsState())));
