import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApiApp } from '../../../lib/api/app.js';
import { engineRunService } from '../../../lib/api/engine-service.js';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { agentWorld, nothingWritten } from '../agents/agent-world.js';

const input = z.object({ customer: z.object({ email: z.email() }), nights: z.number().int().positive() });
const state = { explode: false };
const booker = defineAgent({
  name: 'booker',
  version: '1',
  model: { id: 'scripted:test', maxOutputTokens: 64 },
  input,
  system: {
    version: 's',
    text: (i) => {
      if (state.explode) throw new Error('the rate card is missing');
      return `Book ${i.nights} nights.`;
    },
  },
  tools: [],
});
// Takes extra fields on purpose: z.looseObject keeps them.
const loose = defineAgent({
  name: 'loose',
  version: '1',
  model: { id: 'scripted:test', maxOutputTokens: 64 },
  input: z.looseObject({ ticket: z.string() }),
  system: { version: 's', text: (i) => `Ticket ${i.ticket}.` },
  tools: [],
});
const plain = defineAgent({ name: 'plain', version: '1', model: { id: 'scripted:test', maxOutputTokens: 64 }, system: { version: 's', text: 'hi' }, tools: [] });

function setup() {
  const w = agentWorld([booker, loose, plain], { 'scripted:test': new ScriptedModel([{ text: 'ok' }]) });
  const app = createApiApp({ service: engineRunService(w.worker.deps), caller: () => ({ tenant: 'acme', principal: 'me' }) });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await app.request(path, { method, ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}) });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are inspected loosely
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  return { ...w, call };
}

describe('typed input over HTTP', () => {
  it('POST /runs with input that does not fit: 400 naming body.input paths, nothing written', async () => {
    const { world, call } = setup();
    const res = await call('POST', '/runs', { agent: 'booker', runId: 'r1', input: { customer: { email: 'x' }, nights: 1.5 } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.issues.map((i: { path: string }) => i.path).sort()).toEqual(['body.input.customer.email', 'body.input.nights']);
    expect(await nothingWritten(world, { tenant: 'acme', runId: 'r1' })).toBe(true);
    const ok = await call('POST', '/runs', { agent: 'booker', runId: 'r1', input: { customer: { email: 'a@b.co' }, nights: 1 } });
    expect(ok.status).toBe(201);
  });

  it('POST /runs with a field the z.object schema does not name: 400 naming it (zod would drop it), nothing written; z.looseObject takes it', async () => {
    const { world, call } = setup();
    const res = await call('POST', '/runs', { agent: 'booker', runId: 'r-extra', input: { customer: { email: 'a@b.co', emial: 'typo' }, nights: 1, dryRun: true } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
    expect(res.body.error.issues).toEqual([
      { path: 'body.input.customer.emial', message: expect.stringMatching(/^unknown field/) },
      { path: 'body.input.dryRun', message: expect.stringMatching(/^unknown field/) },
    ]);
    expect(await nothingWritten(world, { tenant: 'acme', runId: 'r-extra' })).toBe(true);
    const kept = await call('POST', '/runs', { agent: 'loose', runId: 'r-loose', input: { ticket: 'T-1', priority: 'high' } });
    expect(kept.status).toBe(201);
    const started = (await world.storage.log.readOne({ tenant: 'acme', runId: 'r-loose' }, 1)) as { input: { value: unknown } };
    expect(started.input.value).toEqual({ ticket: 'T-1', priority: 'high' });
  });

  it('instructions that throw: 400 instructions_failed, nothing written', async () => {
    const { world, call } = setup();
    state.explode = true;
    try {
      const res = await call('POST', '/runs', { agent: 'booker', runId: 'r2', input: { customer: { email: 'a@b.co' }, nights: 1 } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('instructions_failed');
      expect(res.body.error.message).toMatch(/booker@1.*rate card is missing/);
      expect(await nothingWritten(world, { tenant: 'acme', runId: 'r2' })).toBe(true);
    } finally {
      state.explode = false;
    }
  });

  it('GET /agents/{name}/schema publishes the input schema each version pins; 404 for an unknown agent', async () => {
    const { call, world } = setup();
    const res = await call('GET', '/agents/booker/schema');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ agent: 'booker', latest: '1', versions: [{ version: '1', input: booker.inputSchema, instructions: 'function' }] });
    await call('POST', '/runs', { agent: 'booker', runId: 'r3', input: { customer: { email: 'a@b.co' }, nights: 1 } });
    const started = (await world.storage.log.readOne({ tenant: 'acme', runId: 'r3' }, 1)) as { inputSchema: { sha256: string } };
    expect(started.inputSchema.sha256).toBe(res.body.versions[0].input.sha256);
    expect((await call('GET', '/agents/plain/schema')).body.versions[0]).toEqual({ version: '1', input: null, instructions: 'fixed' });
    const missing = await call('GET', '/agents/nobody/schema');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('agent_not_found');
  });

  it('the OpenAPI document names the schema endpoint and points StartRunRequest.input at it', async () => {
    const { call } = setup();
    const doc = (await call('GET', '/openapi.json')).body;
    expect(doc.paths['/agents/{name}/schema'].get.operationId).toBe('getAgentSchema');
    expect(JSON.stringify(doc.components.schemas.StartRunRequest)).toContain('/agents/{name}/schema');
  });
});
