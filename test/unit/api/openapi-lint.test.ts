import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApiApp } from '../../../lib/api/app.js';
import type { RunService } from '../../../lib/api/service.js';

const dir = mkdtempSync(join(tmpdir(), 'logbook-openapi-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The document depends on the routes only: no service call is made to serve it.
const app = createApiApp({ service: {} as RunService, caller: () => undefined });

interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, { operationId?: string; responses: Record<string, unknown> }>>;
  components: { securitySchemes?: Record<string, { type: string; scheme?: string }> };
  security?: Record<string, string[]>[];
}

async function documentFile(): Promise<{ doc: OpenApiDoc; file: string }> {
  const res = await app.request('/openapi.json');
  expect(res.status).toBe(200);
  const text = await res.text();
  const file = join(dir, 'openapi.json');
  writeFileSync(file, text);
  return { doc: JSON.parse(text) as OpenApiDoc, file };
}

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

/** `redocly lint --extends=recommended --format=json`, offline: no telemetry, no update check. */
function redoclyLint(file: string): LintReport {
  const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
  const out = spawnSync(process.execPath, [cli, 'lint', file, '--extends=recommended', '--format=json'], {
    // An empty directory: no redocly.yaml of anyone else's is picked up.
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  });
  const json = out.stdout.slice(out.stdout.indexOf('{'));
  try {
    return JSON.parse(json) as LintReport;
  } catch {
    throw new Error(`redocly lint gave no JSON report (exit ${out.status}): ${out.stderr}`);
  }
}

describe('the OpenAPI document', () => {
  it("passes redocly's recommended rules with no error and no warning", async () => {
    const { file } = await documentFile();
    const report = redoclyLint(file);
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('names every operation (client generators name their functions by operationId)', async () => {
    const { doc } = await documentFile();
    const ids = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    );
    expect(ids.sort()).toEqual([
      'GET /agents/{name}/schema getAgentSchema',
      'GET /attachments/{sha256} getAttachment',
      'GET /run-counts countRuns',
      'GET /runs listRuns',
      'GET /runs/{runId} getRun',
      'GET /runs/{runId}/blobs/{sha256} getRunBlob',
      'GET /runs/{runId}/chat chatRun',
      'GET /runs/{runId}/events listRunEvents',
      'GET /runs/{runId}/operations listRunOperations',
      'GET /runs/{runId}/stream streamRun',
      'GET /workflows listWorkflows',
      'POST /attachments uploadAttachment',
      'POST /runs startRun',
      'POST /runs/{runId}/approve approveCall',
      'POST /runs/{runId}/cancel cancelRun',
      'POST /runs/{runId}/fork forkRun',
      'POST /runs/{runId}/messages sendMessage',
      'POST /runs/{runId}/resolve resolveRun',
      'POST /runs/{runId}/signals sendSignal',
    ]);
  });

  it('declares the two authorizers a deployment may use, SigV4 and JWT, for every operation', async () => {
    const { doc } = await documentFile();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes).toMatchObject({ sigv4: { type: 'apiKey' }, jwt: { type: 'http', scheme: 'bearer' } });
    expect(doc.security).toEqual([{ sigv4: [] }, { jwt: [] }]);
    for (const ops of Object.values(doc.paths)) {
      for (const op of Object.values(ops)) expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '401', '429']));
    }
  });
});
