/**
 * Agents for the inspector's browser tests, loaded by the local stack's worker processes: the demo
 * support agent (its tools as slow as SUPPORT_TOOL_DELAY_MS, so a test can kill the worker during
 * the escalate call `issue_refund`), and `hostile`, whose model and tool output are markup and
 * script meant to run in whatever renders them, one of them large enough to be stored in S3.
 */
import { z } from 'zod';
import { ScriptedModel, defineAgent, defineAgents, defineTool, type Agents } from 'logbook';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from '../../examples/support-agent/agent.js';
import { FileLedger, MemoryLedger } from '../../examples/support-agent/ledger.js';
import { SupportServices } from '../../examples/support-agent/services.js';

export const HOSTILE_MODEL_ID = 'scripted:hostile-v1';
/** Each sets a global the test looks for: none may ever be set. */
export const HOSTILE = {
  img: '<img src=x onerror="window.__xss=1">',
  script: '<script>window.__xss=2</script>',
  svg: '<svg onload="window.__xss=3"></svg>',
  link: '<a href="javascript:window.__xss=4">click</a>',
};

export function createAgents(env: Record<string, string | undefined> = process.env): Agents {
  const ledger = env.SUPPORT_LEDGER_FILE ? new FileLedger(env.SUPPORT_LEDGER_FILE) : new MemoryLedger();
  const fetchPage = defineTool({
    name: 'fetch_page',
    version: '1.0.0',
    description: 'Fetch a web page (returns whatever the page says).',
    input: z.object({ url: z.string() }),
    policy: 'rerun',
    timeoutMs: 5_000,
    async execute({ url }): Promise<Record<string, string>> {
      if (url.endsWith('/big')) return { html: `${HOSTILE.script}${HOSTILE.img}`.repeat(500), note: 'large enough for S3' };
      return { title: HOSTILE.img, body: HOSTILE.script, footer: `${HOSTILE.svg} ${HOSTILE.link}` };
    },
  });
  const hostile = defineAgent({
    name: 'hostile',
    version: '1.0.0',
    model: { id: HOSTILE_MODEL_ID, maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    system: { version: 'h1', text: `You read pages. ${HOSTILE.img}` },
    tools: [fetchPage],
  });
  const model = () =>
    new ScriptedModel([
      { text: `Reading ${HOSTILE.svg}`, calls: [{ name: 'fetch_page', args: { url: HOSTILE.link } }, { name: 'fetch_page', args: { url: 'https://example.com/big' } }] },
      { text: `Done: ${HOSTILE.script} ${HOSTILE.img}` },
    ]);
  return defineAgents({
    agents: [supportAgent(new SupportServices(ledger), { toolDelayMs: Number(env.SUPPORT_TOOL_DELAY_MS ?? 0) }), hostile],
    models: { [SUPPORT_MODEL_ID]: () => supportModel(), [HOSTILE_MODEL_ID]: model },
  });
}

export default () => createAgents();
