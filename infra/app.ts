// This repository's CDK app: it deploys the support agent of examples/support-agent (cdk.json: `npx tsx --conditions=logbook-source infra/app.ts`).
// `-c model=bedrock:<id>` puts a real model behind the agent (LOGBOOK_MODEL, read by agents.ts).
import { buildSupportApp } from './build-app.js';

buildSupportApp().app.synth();
