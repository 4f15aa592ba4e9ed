import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { AgentRegistry } from '../engine/agents.js';
import { selectedModel } from '../models/model-config.js';
import type { ModelClient } from '../ports/model-client.js';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from '../../examples/support-agent/agent.js';
import { FileLedger, MemoryLedger } from '../../examples/support-agent/ledger.js';
import { SupportServices } from '../../examples/support-agent/services.js';
import type { LogbookEnv } from './env.js';

/** The agents a deployment serves, and the scripted models they may pin. */
export interface Agents {
  registry: AgentRegistry;
  /** Builds the client for a `scripted:*` model id; undefined for ids it does not know. */
  scripted?: (modelId: string) => ModelClient | undefined;
}

/**
 * The default agents: the demo support agent over fake downstream services. Locally the services
 * record side effects in a JSONL file (LOGBOOK_LEDGER_FILE) so the record survives a killed
 * worker process; on AWS they keep it in memory. Replace this module (or point
 * LOGBOOK_AGENTS_MODULE at one exporting `createAgents()`) to serve your own agents.
 */
export function defaultAgents(
  env: Pick<LogbookEnv, 'LOGBOOK_LEDGER_FILE' | 'LOGBOOK_TOOL_DELAY_MS' | 'LOGBOOK_MODEL'>,
  source: Record<string, string | undefined> = process.env,
): Agents {
  const ledger = env.LOGBOOK_LEDGER_FILE ? new FileLedger(env.LOGBOOK_LEDGER_FILE) : new MemoryLedger();
  const services = new SupportServices(ledger);
  // LOGBOOK_MODEL=bedrock:... or openai:... puts a real model behind the demo agent.
  const real = env.LOGBOOK_MODEL.startsWith('scripted') ? undefined : selectedModel(source);
  const registry = new AgentRegistry().register(
    supportAgent(services, { toolDelayMs: env.LOGBOOK_TOOL_DELAY_MS, ...(real ? { model: { id: real.modelId, price: real.price } } : {}) }),
  );
  return { registry, scripted: (id) => (id === SUPPORT_MODEL_ID ? supportModel() : undefined) };
}

export async function loadAgents(env: LogbookEnv, source: Record<string, string | undefined> = process.env): Promise<Agents> {
  if (!env.LOGBOOK_AGENTS_MODULE) return defaultAgents(env, source);
  const url = pathToFileURL(resolve(env.LOGBOOK_AGENTS_MODULE)).href;
  const mod = (await import(url)) as { createAgents?: (env: LogbookEnv) => Agents | Promise<Agents> };
  if (typeof mod.createAgents !== 'function') {
    throw new ConfigError(`LOGBOOK_AGENTS_MODULE ${env.LOGBOOK_AGENTS_MODULE} does not export createAgents()`);
  }
  return mod.createAgents(env);
}
