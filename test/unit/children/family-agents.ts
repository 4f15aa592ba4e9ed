/**
 * A parent agent that calls a child agent through agentTool, written with the public entry points
 * only: a planner asks a researcher, which looks a topic up (a read) and answers. The researcher's
 * lookup writes to an effectLog(), so the harness can count it.
 */
import { z } from 'zod';
import { ScriptedModel, agentTool, defineAgent, defineAgents, defineTool, type Agents, type BudgetRequest, type JsonValue, type ModelRequest } from 'logbook';
import { agentsWorld, effectLog, type EffectRecorder, type World } from 'logbook/testing';

export const PARENT_MODEL = 'scripted:planner';
export const CHILD_MODEL = 'scripted:researcher';

const lastTool = (r: ModelRequest) => [...r.messages].reverse().find((m) => m.role === 'tool');
const toolText = (r: ModelRequest) => {
  const content = lastTool(r)?.content;
  return typeof content === 'string' ? content : JSON.stringify(content);
};

export interface FamilyOptions {
  /** The agentTool's budgets for the child. */
  childBudgets?: BudgetRequest;
  /** The parent's own budgets. */
  parentBudgets?: BudgetRequest;
  /** The child's lookup needs a person's approval first (the child parks for a person). */
  childApproval?: boolean;
  /** The child's steps (1: it cannot afford the model call that would answer, and fails). */
  childSteps?: number;
  /** Leave the child's model out (the child parks as missing_model and never answers). */
  noChildModel?: boolean;
  /** The child answers with this many characters (above the inline limit: a blob). */
  bigAnswer?: number;
  /** The parent asks two researchers at once (two child calls in one turn). */
  twoCalls?: boolean;
}

export function familyAgents(effects: EffectRecorder<JsonValue>, options: FamilyOptions = {}): Agents {
  const lookup = defineTool({
    name: 'lookup',
    version: '1',
    description: 'Look a topic up in the encyclopedia.',
    input: z.object({ topic: z.string() }),
    policy: 'rerun',
    timeoutMs: 5_000,
    ...(options.childApproval ? { approval: 'always' as const } : {}),
    async execute({ topic }, ctx) {
      effects.read('lookup', ctx.idempotencyKey, { topic });
      return { topic, fact: `${topic} hold coffee` };
    },
  });
  const researcher = defineAgent({
    name: 'researcher',
    version: '1',
    model: { id: CHILD_MODEL, maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    system: { version: 'r1', text: 'You research one topic and answer briefly.' },
    tools: [lookup],
    graceMs: 1_000,
  });
  const planner = defineAgent({
    name: 'planner',
    version: '1',
    model: { id: PARENT_MODEL, maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
    system: { version: 'p1', text: 'You plan, and ask the researcher for facts.' },
    tools: [
      agentTool(researcher, {
        name: 'research',
        description: 'Ask the researcher agent about a topic.',
        budgets: { maxInputTokens: 20_000, maxOutputTokens: 2_000, maxCostUsd: 0.5, ...(options.childSteps ? { maxSteps: options.childSteps } : {}), ...options.childBudgets },
      }),
    ],
    ...(options.parentBudgets ? { budgets: options.parentBudgets } : {}),
    graceMs: 1_000,
  });
  return defineAgents({
    agents: [planner],
    models: {
      [PARENT_MODEL]: () =>
        new ScriptedModel([
          {
            text: 'Asking the researcher.',
            calls: [{ name: 'research', args: { task: 'mugs' } }, ...(options.twoCalls ? [{ name: 'research', args: { task: 'cups' } }] : [])],
          },
          (r) => ({ text: options.twoCalls ? `plan: ${r.messages.filter((m) => m.role === 'tool').map((m) => m.content).join(' | ')}` : `plan: ${toolText(r)}` }),
        ]),
      ...(options.noChildModel
        ? {}
        : {
            [CHILD_MODEL]: () =>
              new ScriptedModel([
                { text: 'Looking it up.', calls: [{ name: 'lookup', args: { topic: 'mugs' } }] },
                (r) => ({ text: `findings: ${toolText(r)}${options.bigAnswer ? ' '.repeat(0) + 'x'.repeat(options.bigAnswer) : ''}` }),
              ]),
          }),
    },
  });
}

export function familyWorld(options: FamilyOptions = {}): World & { effects: EffectRecorder<JsonValue> } {
  const effects = effectLog<JsonValue>();
  return { ...agentsWorld(familyAgents(effects, options)), effects };
}
