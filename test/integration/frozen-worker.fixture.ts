/**
 * Agents for the frozen-worker test, loaded by the local stack's worker processes: the demo
 * support agent on the demo's services (one ledger file), slowed down per run so that a test can
 * freeze a worker at a chosen moment of a call:
 * - runs named `*before-check*`: every tool works 2.5 s before its lease check, so a worker
 *   frozen there wakes up before its request leaves;
 * - runs named `*in-flight*`: tools check their lease at once and each write is 3 s in flight to
 *   its service, so a worker frozen there has already sent its request.
 */
import { defineAgents, type Agents } from 'logbook';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from '../../examples/support-agent/agent.js';
import { FileLedger, MemoryLedger } from '../../examples/support-agent/ledger.js';
import { SupportServices } from '../../examples/support-agent/services.js';

const WORK_MS = 2_500;
const IN_FLIGHT_MS = 3_000;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

export function createAgents(env: Record<string, string | undefined> = process.env): Agents {
  // The API process loads this module too (it runs no tools): only the workers get the file.
  const file = env.SUPPORT_LEDGER_FILE;
  const services = new SupportServices(file ? new FileLedger(file) : new MemoryLedger(), {
    transit: (_service, stamp) => (stamp.key.includes('in-flight') ? sleep(IN_FLIGHT_MS) : Promise.resolve()),
  });
  return defineAgents({
    agents: [supportAgent(services, { work: (_tool, ctx) => (ctx.runId.includes('before-check') ? sleep(WORK_MS, ctx.signal) : Promise.resolve()) })],
    models: { [SUPPORT_MODEL_ID]: () => supportModel() },
  });
}

export default () => createAgents();
