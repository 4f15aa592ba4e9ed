/**
 * The agents module of `npm run bench -- --scale`: the bench agent, for the local stack's API and
 * worker processes. BENCH_TURNS sets the turns per run.
 */
import { defineAgents } from '../lib/index.js';
import { BENCH_MODEL_ID, benchAgent, benchModel } from './bench-agent.js';

export default () => {
  const turns = Number(process.env.BENCH_TURNS ?? 5);
  return defineAgents({ agents: [benchAgent(turns)], models: { [BENCH_MODEL_ID]: () => benchModel(turns) } });
};
