import { z } from 'zod';
import { ManualClock } from '../lib/adapters/memory/manual-clock.js';
import type { ContextSpec } from '../lib/authoring/context-spec.js';
import { defineAgent } from '../lib/authoring/define-agent.js';
import { defineTool } from '../lib/authoring/define-tool.js';
import { AgentRegistry } from '../lib/authoring/registry.js';
import { reservationOf, type RunEvent } from '../lib/core/events.js';
import { startRun } from '../lib/engine/start-run.js';
import { ScriptedModel, StaticModelResolver } from '../lib/models/scripted-model.js';
import { driveRun } from '../lib/testing/driver.js';
import { memoryStorage, spawnWorker, type World } from '../lib/testing/world.js';

/**
 * `npm run bench -- --context [--turns 200]`: input tokens per turn over one long run, with each
 * context policy and without one. In memory, with a scripted model: the figures are the engine's
 * own input-token estimate for each turn's model call (the reservation written before it, about 3
 * characters a token) and what the scripted model reports for the prompt it got (4 characters a
 * token). Every turn asks for one tool call whose result is RESULT_CHARS characters.
 */
const MODEL = 'scripted:context-bench';
const RESULT_CHARS = 1_000;

const search = defineTool({
  name: 'search',
  version: '1',
  description: 'search the catalogue',
  input: z.object({ n: z.number() }),
  policy: 'rerun',
  execute: async ({ n }) => `result ${n}: ${'lorem ipsum '.repeat(RESULT_CHARS / 12).slice(0, RESULT_CHARS)}`,
});

export const CONTEXT_POLICIES: { name: string; context?: ContextSpec }[] = [
  { name: 'no policy' },
  { name: 'keepTurns 8, older results: summary', context: { keepTurns: 8, olderToolResults: 'summary' } },
  { name: 'keepTurns 8, older turns: drop', context: { keepTurns: 8, olderToolResults: 'drop' } },
  {
    name: 'keepTurns 8, summary, summarize every 8 (512 tokens)',
    context: { keepTurns: 8, olderToolResults: 'summary', summarize: { maxOutputTokens: 512, everyTurns: 8 } },
  },
];

export interface ContextBenchRun {
  name: string;
  /** The engine's input-token estimate (the reservation) of each turn's model call, in order. */
  estimated: number[];
  /** The input tokens the scripted model reported for each turn. */
  reported: number[];
  summaries: number;
  /** The engine's input-token estimate of each summary call. */
  summaryEstimated: number[];
  status: string;
}

export async function contextBenchRun(turns: number, policy: (typeof CONTEXT_POLICIES)[number]): Promise<ContextBenchRun> {
  const agent = defineAgent({
    name: 'bench',
    version: '1',
    model: { id: MODEL, maxOutputTokens: 256, price: { inputPerMTokUsd: 0, outputPerMTokUsd: 0 } },
    system: { version: '1', text: 'You look things up in the catalogue.' },
    tools: [search],
    budgets: { maxSteps: 1_000, maxInputTokens: 50_000_000, maxOutputTokens: 5_000_000, maxCostUsd: 500 },
    ...(policy.context ? { context: policy.context } : {}),
  });
  const model = new ScriptedModel(
    [(request) => ((request.turns ?? request.messages.filter((m) => m.role === 'assistant').length) + 1 >= turns ? { text: 'done' } : { calls: [{ name: 'search', args: { n: request.turns ?? 0 } }] })],
    // A summary of about the size a model writes for a few turns (~400 characters).
    { summary: (request) => `The agent searched the catalogue ${request.messages.length} times so far. ${'It noted results. '.repeat(20)}` },
  );
  const world: World = { storage: memoryStorage(), clock: new ManualClock(), registry: new AgentRegistry().register(agent), models: new StaticModelResolver({ [MODEL]: model }) };
  const worker = spawnWorker(world);
  const run = { tenant: 'bench', runId: 'context' };
  await startRun(worker.deps, { ...run, agent: 'bench', input: 'Find every item of the spring catalogue.' });
  const { head } = await driveRun(world, run, { worker: () => worker, maxIterations: 20 * turns });
  const events = (await world.storage.log.read(run, { afterSeq: 0, limit: 100_000 })).events as RunEvent[];
  const estimated: number[] = [];
  const reported: number[] = [];
  const summaryEstimated: number[] = [];
  let summaryOpen = false;
  for (const e of events) {
    if (e.type === 'model_started' && e.purpose === 'summary') {
      summaryEstimated.push(e.reserved.inputTokens);
      summaryOpen = true;
      continue;
    }
    const r = reservationOf(e);
    if (r) estimated.push(r.reserved.inputTokens);
    if (e.type === 'model_response') {
      if (!summaryOpen) reported.push(e.usage.inputTokens);
      summaryOpen = false;
    }
  }
  return { name: policy.name, estimated, reported, summaries: summaryEstimated.length, summaryEstimated, status: head.status };
}

/** The table `--context` prints: input tokens per window of turns (its largest: summaries make a saw), per policy. */
export async function runContextBench(turns: number): Promise<string> {
  const runs: ContextBenchRun[] = [];
  for (const policy of CONTEXT_POLICIES) runs.push(await contextBenchRun(turns, policy));
  const cuts = [0, 10, 50, 100, 150, turns].filter((t, i, all) => t <= turns && all.indexOf(t) === i);
  const windows = cuts.slice(1).map((to, i) => ({ from: cuts[i]! + 1, to }));
  const lines = [
    `## Input tokens per turn over a ${turns}-turn run`,
    '',
    `Generated by \`npm run bench -- --context --turns ${turns}\` (bench/context.ts): one run per policy, in memory, scripted model; each turn calls one tool whose result is ${RESULT_CHARS} characters.`,
    "Each cell is the largest over the turns of its column: the engine's estimate reserved before the call (3 characters a token, high on purpose) / what the scripted model reported for the prompt it got (4 characters a token).",
    '',
    `| policy | ${windows.map((w) => `turns ${w.from}-${w.to}`).join(' | ')} | summary calls (largest estimate) | ended |`,
    `|---|${windows.map(() => '---:').join('|')}|---:|---|`,
  ];
  for (const r of runs) {
    const peak = (xs: number[], w: { from: number; to: number }) => Math.max(...xs.slice(w.from - 1, w.to));
    lines.push(`| ${r.name} | ${windows.map((w) => `${peak(r.estimated, w)} / ${peak(r.reported, w)}`).join(' | ')} | ${r.summaries}${r.summaries > 0 ? ` (${Math.max(...r.summaryEstimated)})` : ''} | ${r.status} |`);
  }
  return lines.join('\n');
}
