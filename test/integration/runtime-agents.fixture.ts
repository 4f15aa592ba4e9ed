/**
 * Agents for the runtime integration tests, loaded by the worker processes through
 * their agents module: the demo support agent plus `slow`, whose tools take as long as the
 * task says, so a test can cancel during a long call or kill the worker in the middle of one.
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { ScriptedModel, defineAgent, defineAgents, defineTool, type Agents, type ModelRequest } from 'logbook';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from '../../examples/support-agent/agent.js';
import { FileLedger, MemoryLedger } from '../../examples/support-agent/ledger.js';
import { SupportServices } from '../../examples/support-agent/services.js';

export const SLOW_MODEL_ID = 'scripted:slow-v1';

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });
}

function task(request: ModelRequest): string {
  const first = request.messages[0];
  return first?.role === 'user' ? first.content : '';
}

/** `slow-lookup`: longer than any test waits (for cancel); `medium-lookup`: longer than the tick's visibility. */
function lookupMs(task: string): number {
  if (task.includes('slow-lookup')) return 30_000;
  if (task.includes('medium-lookup')) return 9_000;
  return 10;
}

export function createAgents(env: Record<string, string | undefined> = process.env): Agents {
  const ledgerFile = env.SUPPORT_LEDGER_FILE;
  const services = new SupportServices(ledgerFile ? new FileLedger(ledgerFile) : new MemoryLedger());
  const record = (line: Record<string, unknown>) => {
    if (ledgerFile) appendFileSync(`${ledgerFile}.slow`, `${JSON.stringify(line)}\n`);
  };
  const lookup = defineTool({
    name: 'lookup',
    version: '1.0.0',
    description: 'Read something slowly.',
    input: z.object({ q: z.string(), ms: z.number().int().nonnegative() }),
    policy: 'rerun',
    timeoutMs: 30_000,
    async execute({ q, ms }, ctx) {
      await sleep(ms, ctx.signal);
      return { found: q };
    },
  });
  const charge = defineTool({
    name: 'charge',
    version: '1.0.0',
    description: 'Charge a card. Irreversible, cannot be looked up.',
    input: z.object({ cents: z.number().int().positive(), ms: z.number().int().nonnegative() }),
    policy: 'escalate',
    timeoutMs: 5_000,
    async execute({ cents, ms }, ctx) {
      record({ op: 'charge-start', key: ctx.idempotencyKey });
      await sleep(ms, ctx.signal);
      record({ op: 'charge', key: ctx.idempotencyKey, cents });
      return { chargeId: `ch-${ctx.callId}` };
    },
  });
  const slow = defineAgent({
    name: 'slow',
    version: '1.0.0',
    model: { id: SLOW_MODEL_ID, maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    system: { version: 's1', text: 'You are slow on purpose.' },
    tools: [lookup, charge],
    graceMs: 1_000,
  });
  const model = () =>
    new ScriptedModel([
      (r) => ({ text: 'Looking.', calls: [{ name: 'lookup', args: { q: 'x', ms: lookupMs(task(r)) } }] }),
      (r) => ({ text: 'Charging.', calls: [{ name: 'charge', args: { cents: 500, ms: task(r).includes('slow-charge') ? 4_000 : 10 } }] }),
      { text: 'Charged 500 cents.' },
    ]);
  return defineAgents({
    agents: [supportAgent(services), slow],
    models: { [SUPPORT_MODEL_ID]: () => supportModel(), [SLOW_MODEL_ID]: model },
  });
}

export default () => createAgents();
