#!/usr/bin/env node
// The `logbook` command: registers tsx so the TypeScript sources run as they are, then runs the CLI.
import { register } from 'tsx/esm/api';

register();
const { runAsProcess } = await import('../lib/cli/main.ts');
await runAsProcess(process.argv.slice(2));
