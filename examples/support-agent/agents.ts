/**
 * The support app's agents module: what its handlers, its CDK app and `logbook dev` load. The
 * fake downstream services record side effects in a JSONL file when SUPPORT_LEDGER_FILE is set
 * (locally, so the record survives a killed worker), in memory otherwise.
 * LOGBOOK_MODEL=bedrock:<id> or openai:<model> puts a real model behind the agent.
 */
import { defineAgents, selectedModel, type Agents } from 'logbook';
import { FAILING_RUN_SUFFIX, POISON_RUN_SUFFIX, SUPPORT_MODEL_ID, supportAgent, supportModel } from './agent.js';
import { GUARDED_MODEL_ID, guardedAgent, guardedModel } from './guarded-agent.js';
import { FileLedger, MemoryLedger } from './ledger.js';
import { SupportServices } from './services.js';

export function createSupportAgents(env: Record<string, string | undefined> = process.env): Agents {
  const ledger = env.SUPPORT_LEDGER_FILE ? new FileLedger(env.SUPPORT_LEDGER_FILE) : new MemoryLedger();
  // The services' latency is how long a write is in flight after the tool's lease check.
  const services = new SupportServices(ledger, { latencyMs: Number(env.SUPPORT_SERVICE_LATENCY_MS ?? 0) });
  const modelName = env.LOGBOOK_MODEL?.trim() ?? '';
  const real = modelName === '' || modelName.startsWith('scripted') ? undefined : selectedModel(env);
  const toolDelayMs = Number(env.SUPPORT_TOOL_DELAY_MS ?? 0);
  const model = real ? { model: { id: real.modelId, price: real.price } } : {};
  // `npm run chaos` scripts a poison run and a broken lookup by run id suffix (agent.ts SupportFaults).
  // Both agents get them: they share the search_orders contract, so the registry holds one of them.
  const faults = env.SUPPORT_FAULTS === '1' ? { faults: { killsWorker: (runId: string) => runId.endsWith(POISON_RUN_SUFFIX), fails: (runId: string) => runId.endsWith(FAILING_RUN_SUFFIX) } } : {};
  return defineAgents({
    agents: [supportAgent(services, { toolDelayMs, ...model, ...faults }), guardedAgent(services, { toolDelayMs, ...model, ...faults })],
    models: { [SUPPORT_MODEL_ID]: () => supportModel(), [GUARDED_MODEL_ID]: () => guardedModel() },
  });
}

/** Built once per cold start, from that process's environment. */
export default () => createSupportAgents();
