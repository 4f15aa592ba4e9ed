/**
 * Agents for the conversation view's browser test, loaded by the local stack's worker processes:
 * the demo support agent; `lead`, which reads a page large enough to be stored in S3 and hands a
 * task to the `helper` agent (a child run); and `hostile`, whose model text and tool output are
 * markup and script meant to run in whatever renders them.
 */
import { z } from 'zod';
import { ScriptedModel, agentTool, defineAgent, defineAgents, defineTool, type Agents, type ScriptedModelOptions } from 'logbook';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from '../../examples/support-agent/agent.js';
import { MemoryLedger } from '../../examples/support-agent/ledger.js';
import { SupportServices } from '../../examples/support-agent/services.js';
import { HOSTILE } from './ui-agents.fixture.js';

const price = { inputPerMTokUsd: 1, outputPerMTokUsd: 2 };
export const LEAD_MODEL_ID = 'scripted:lead-v1';
export const HELPER_MODEL_ID = 'scripted:helper-v1';
export const HOSTILE_MODEL_ID = 'scripted:hostile-conv-v1';
export const SLOW_MODEL_ID = 'scripted:slow-v1';
/** Written slowly by the `slow` agent's model when models stream: markup included, to stay text. */
export const SLOW_TEXT = `Once upon a time ${HOSTILE.img} a model wrote slowly, a few words at a time, ${HOSTILE.script} and the page showed each word as it came.`;
export const BIG_PAGE_MARK = 'chapter 800 of the long page';

const readPage = defineTool({
  name: 'read_page',
  version: '1.0.0',
  description: 'Read a web page (returns whatever the page says).',
  input: z.object({ url: z.string() }),
  policy: 'rerun',
  timeoutMs: 5_000,
  async execute({ url }): Promise<Record<string, string>> {
    if (url.endsWith('/long')) return { text: Array.from({ length: 800 }, (_, i) => `chapter ${i + 1} of the long page.`).join(' ') };
    return { title: HOSTILE.img, body: HOSTILE.script, footer: `${HOSTILE.svg} ${HOSTILE.link}` };
  },
});

export function createAgents(): Agents {
  const helper = defineAgent({
    name: 'helper',
    version: '1.0.0',
    model: { id: HELPER_MODEL_ID, maxOutputTokens: 256, price },
    system: { version: 'h1', text: 'You help.' },
    tools: [],
  });
  const lead = defineAgent({
    name: 'lead',
    version: '1.0.0',
    model: { id: LEAD_MODEL_ID, maxOutputTokens: 256, price },
    system: { version: 'l1', text: 'You read pages and delegate.' },
    tools: [readPage, agentTool(helper, { name: 'ask_helper', description: 'Ask the helper agent.', budgets: { maxSteps: 3, maxCostUsd: 0.1 } })],
    budgets: { maxSteps: 6, maxCostUsd: 1 },
  });
  const hostile = defineAgent({
    name: 'hostile',
    version: '1.0.0',
    model: { id: HOSTILE_MODEL_ID, maxOutputTokens: 256, price },
    system: { version: 'x1', text: 'You read pages.' },
    tools: [readPage],
  });
  const slow = defineAgent({
    name: 'slow',
    version: '1.0.0',
    model: { id: SLOW_MODEL_ID, maxOutputTokens: 256, price },
    system: { version: 's1', text: 'You write slowly.' },
    tools: [],
  });
  // A pace of a few characters every 150 ms, where the scripted model streams (options it does
  // not know are ignored where it does not).
  const pace = { pace: { chunkChars: 8, delayMs: 150 } } as ScriptedModelOptions;
  return defineAgents({
    agents: [supportAgent(new SupportServices(new MemoryLedger())), lead, hostile, slow],
    models: {
      [SUPPORT_MODEL_ID]: () => supportModel(),
      [LEAD_MODEL_ID]: () =>
        new ScriptedModel([
          {
            text: 'Reading the long page, and asking the helper.',
            calls: [
              { name: 'read_page', args: { url: 'https://example.com/long' } },
              { name: 'ask_helper', args: { task: 'Summarise chapter 1' } },
            ],
          },
          { text: 'Both done: the page is long, and the helper summarised it.' },
        ]),
      [HELPER_MODEL_ID]: () => new ScriptedModel([{ text: 'Chapter 1 is short.' }]),
      [SLOW_MODEL_ID]: () => new ScriptedModel([{ text: SLOW_TEXT }], pace),
      [HOSTILE_MODEL_ID]: () =>
        new ScriptedModel([
          { text: `Reading ${HOSTILE.svg}`, calls: [{ name: 'read_page', args: { url: HOSTILE.link } }] },
          { text: `Done: ${HOSTILE.script} ${HOSTILE.img}` },
        ]),
    },
  });
}

export default () => createAgents();
