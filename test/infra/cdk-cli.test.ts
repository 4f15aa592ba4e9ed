import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { synthLogbook } from './synth.js';

/** The environment of a machine with no AWS account: every credential source removed. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith('AWS_') || key.startsWith('CDK_')) delete env[key];
  }
  return {
    ...env,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
  };
}

const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

type Resources = Record<string, { Type: string }>;

describe('npx cdk synth (the CLI path of cdk.json)', () => {
  it('synthesizes and bundles offline without credentials, the same resources as the in-process synth', { timeout: 240_000 }, () => {
    const outdir = mkdtempSync(join(tmpdir(), 'logbook-cdk-cli-'));
    const result = spawnSync('npx', ['cdk', 'synth', '--quiet', '--no-notices', '--no-version-reporting', '-o', outdir], {
      cwd: PROJECT_ROOT,
      env: offlineEnv(),
      encoding: 'utf8',
      timeout: 230_000,
    });
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    const cli = JSON.parse(readFileSync(join(outdir, 'Logbook.template.json'), 'utf8')) as { Resources: Resources };
    const bundles = JSON.parse(readFileSync(join(outdir, 'Logbook.assets.json'), 'utf8')) as { files: Record<string, { source: { packaging?: string } }> };
    expect(Object.values(bundles.files).filter((f) => f.source.packaging === 'zip')).toHaveLength(4);

    const inProcess = synthLogbook({ bundle: false }).template.toJSON() as { Resources: Resources };
    const shape = (r: Resources) => Object.entries(r).map(([id, res]) => `${id}:${res.Type}`).sort();
    expect(shape(cli.Resources)).toEqual(shape(inProcess.Resources));
  });
});
