/**
 * Agents for the frozen-worker test, loaded by the local stack's worker processes: the demo
 * support agent on the demo's services (one ledger file). The first attempt of create_ticket and
 * send_email is held until the test drops a `go-<runId>` file in FROZEN_GO_DIR, so the test can
 * freeze a worker at a known point of a call, with no race against the clock:
 * - runs named `*before-check*` are held in the tool's own work, before its lease check;
 * - runs named `*in-flight*` are held after the check, while the request is in flight to the
 *   service (the first worker's requests carry fencing token 1: the run's first claim).
 * Later attempts, by the worker that took over, run at once.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { defineAgents, type Agents } from 'logbook';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from '../../examples/support-agent/agent.js';
import { FileLedger, MemoryLedger } from '../../examples/support-agent/ledger.js';
import { SupportServices } from '../../examples/support-agent/services.js';

const HELD_TOOLS = new Set(['create_ticket', 'send_email']);
const HELD_SERVICES = new Set(['tickets', 'email']);

export function createAgents(env: Record<string, string | undefined> = process.env): Agents {
  const dir = env.FROZEN_GO_DIR;
  const holdUntilGo = async (runId: string) => {
    while (dir && !existsSync(join(dir, `go-${runId}`))) await new Promise((r) => setTimeout(r, 20));
  };
  // The API process loads this module too (it runs no tools): only the workers get the file.
  const file = env.SUPPORT_LEDGER_FILE;
  const services = new SupportServices(file ? new FileLedger(file) : new MemoryLedger(), {
    transit: async (service, stamp) => {
      const runId = stamp.key.split(':')[1] ?? '';
      if (runId.includes('in-flight') && HELD_SERVICES.has(service) && stamp.token === 1) await holdUntilGo(runId);
    },
  });
  return defineAgents({
    agents: [
      supportAgent(services, {
        work: async (tool, ctx) => {
          if (ctx.runId.includes('before-check') && HELD_TOOLS.has(tool) && ctx.attempt === 1) await holdUntilGo(ctx.runId);
        },
      }),
    ],
    models: { [SUPPORT_MODEL_ID]: () => supportModel() },
  });
}

export default () => createAgents();
