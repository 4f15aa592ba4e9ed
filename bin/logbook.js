#!/usr/bin/env node
// The `logbook` command. tsx is registered so that an application's TypeScript (its agents module)
// loads as it is. Inside Logbook's own repository it runs the TypeScript sources (with the
// `logbook-source` condition, so the examples' `import 'logbook'` resolves to them too); an
// installed package runs its compiled dist/.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const source = fileURLToPath(new URL('../dev/cli/main.ts', import.meta.url));
const fromSource = existsSync(source);
if (fromSource && !process.execArgv.includes('--conditions=logbook-source')) {
  const tsx = fileURLToPath(import.meta.resolve('tsx'));
  const child = spawnSync(process.execPath, ['--conditions=logbook-source', '--import', tsx, source, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(child.status ?? 1);
}
const { register } = await import('tsx/esm/api');
register();
// Started with the source condition already (node --conditions=logbook-source bin/logbook.js):
// the sources, never a dist/ that may be older than them.
const { runAsProcess } = await import(fromSource ? '../dev/cli/main.ts' : '../dist/dev/cli/main.js');
await runAsProcess(process.argv.slice(2));
