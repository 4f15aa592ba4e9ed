// CDK entry point (cdk.json: `npx tsx infra/app.ts`). Account and region come from the CLI's
// profile when deploying; without credentials the stack synthesizes environment-agnostic.
import { buildLogbookApp } from './build-app.js';

const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
const { app } = buildLogbookApp({ env: account && region ? { account, region } : undefined });
app.synth();
