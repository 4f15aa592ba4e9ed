/**
 * The ops agent: its two tools, its scripted model and the agent itself. src/agents.ts registers
 * it (and, in a `logbook init --workflow` project, the workflow that calls it).
 */
import { z } from 'zod';
import { defineAgent, defineTool, selectedModel, type ModelRequest, type ScriptStep } from 'logbook';
import type { OpsServices, ServiceStatus } from './services.js';

/** A scripted model, so the project runs with no model account (see LOGBOOK_MODEL below). */
export const MODEL_ID = 'scripted:ops-v1';

export function opsTools(services: OpsServices) {
  return [
    defineTool({
      name: 'lookup_service',
      version: '1.0.0',
      description: 'Current status, error rate and deployed version of a service.',
      input: z.object({ service: z.string().min(1) }),
      // Read-only: a call cut off by a crash simply runs again. No timeoutMs: the default, 60 s.
      policy: 'rerun',
      async execute({ service }, ctx) {
        return services.lookup(service, ctx.idempotencyKey);
      },
    }),
    defineTool({
      name: 'restart_service',
      version: '1.0.0',
      description: 'Rolling restart of a service. Deduplicated by idempotency key.',
      input: z.object({ service: z.string().min(1), reason: z.string() }),
      // The deploy system dedupes by key, so a cut-off call runs again with the same key.
      policy: 'idempotency_key',
      timeoutMs: 30_000,
      async execute({ service }, ctx) {
        return services.restart(service, ctx.idempotencyKey);
      },
    }),
  ];
}

/** The latest successful result of `tool` the model has seen, parsed. */
function lastResult<T>(request: ModelRequest, tool: string): T | undefined {
  for (const m of [...request.messages].reverse()) {
    if (m.role === 'tool' && m.name === tool && !m.isError) return JSON.parse(m.content) as T;
  }
  return undefined;
}

/** Look the service up, restart it if it is degraded, then say what was done. */
export function opsScript(service = 'checkout'): ScriptStep[] {
  return [
    { text: `Checking ${service} first.`, calls: [{ name: 'lookup_service', args: { service } }] },
    (request) => {
      const status = lastResult<ServiceStatus>(request, 'lookup_service');
      if (status?.status !== 'degraded') return { text: `${service} looks healthy; nothing to do.` };
      return { text: 'Error rate is high: restarting.', calls: [{ name: 'restart_service', args: { service, reason: `error rate ${status.errorRate}` } }] };
    },
    (request) => {
      const status = lastResult<ServiceStatus>(request, 'lookup_service');
      const restart = lastResult<{ restartId: string }>(request, 'restart_service');
      if (!restart) return { text: `Could not restart ${service}.` };
      return {
        text: `Restarted ${service} (version ${status?.version ?? 'unknown'}) after its error rate reached ${Math.round((status?.errorRate ?? 0) * 100)}%.`,
      };
    },
  ];
}

/**
 * The ops agent. LOGBOOK_MODEL=bedrock:<model id> (or openai:<model>, with OPENAI_BASE_URL) puts a
 * real model behind it; unset, it runs on the scripted model.
 */
export function opsAgent(services: OpsServices, env: Record<string, string | undefined> = process.env) {
  const real = env.LOGBOOK_MODEL && !env.LOGBOOK_MODEL.startsWith('scripted') ? selectedModel(env) : undefined;
  return defineAgent({
    name: 'ops',
    version: '1.0.0',
    model: real
      ? { id: real.modelId, maxOutputTokens: 1024, price: real.price }
      : { id: MODEL_ID, maxOutputTokens: 1024, price: { inputPerMTokUsd: 3, outputPerMTokUsd: 15 } },
    system: { version: 'v1', text: 'You are an on-call assistant. Look before you act; restart a service only when it is degraded.' },
    tools: opsTools(services),
    budgets: { maxSteps: 10, maxCostUsd: 0.5 },
    // How long past a cut-off call's deadline its policy waits (default 30 s).
    graceMs: 5_000,
  });
}
