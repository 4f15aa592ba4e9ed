// The support app's CDK app (cdk.json: `npx tsx --conditions=logbook-source examples/support-agent/infra/app.ts`).
// `-c model=bedrock:<id>` puts a real model behind the agent (LOGBOOK_MODEL, read by agents.ts).
import { buildSupportApp } from './build-app.js';

buildSupportApp().app.synth();
