import { buildLogbookApp, type LogbookAppOptions } from 'logbook/cdk';

/** The support app as `cdk synth` builds it; the tests build the same one. */
export function buildSupportApp(options: Partial<LogbookAppOptions> = {}) {
  return buildLogbookApp({
    agents: 'examples/support-agent/agents.ts',
    handlers: {
      worker: 'functions/worker.ts',
      api: 'functions/api.ts',
      trigger: 'functions/trigger.ts',
      sweeper: 'functions/sweeper.ts',
      // Deployed when the agents have a schedule (docs/guides/deploying.md#schedules).
      schedule: 'functions/schedule.ts',
    },
    // `-c model=bedrock:<id>` puts a real model behind the agent (agents.ts reads LOGBOOK_MODEL).
    environment: (context) => {
      const model = context('model');
      const env: Record<string, string> = {};
      if (typeof model === 'string' && model !== '') env.LOGBOOK_MODEL = model;
      return env;
    },
    ...options,
  });
}
