// The CDK app (`npx cdk deploy`): one stack with the run table, payload bucket, step queue, the
// four functions bundling src/agents.ts, the HTTP API, the event bus and alarms, checked by cdk-nag.
import { buildLogbookApp } from 'logbook/cdk';

buildLogbookApp({
  agents: 'src/agents.ts',
  handlers: {
    worker: 'functions/worker.ts',
    api: 'functions/api.ts',
    trigger: 'functions/trigger.ts',
    sweeper: 'functions/sweeper.ts',
  },
  // `npx cdk deploy -c model=bedrock:<id>` sets LOGBOOK_MODEL in the functions (see src/agents.ts);
  // the worker may then invoke exactly that model.
  environment: (context): Record<string, string> => {
    const model = context('model');
    return typeof model === 'string' && model !== '' ? { LOGBOOK_MODEL: model } : {};
  },
}).app.synth();
