import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryBlobStore } from '../../../lib/adapters/memory/memory-blob-store.js';
import { BlobIntegrityError, BlobNotFoundError } from '../../../lib/core/errors.js';
import type { ModelRequest, ModelResponse } from '../../../lib/core/messages.js';
import { PayloadCodec } from '../../../lib/engine/payload-codec.js';
import { Redactor } from '../../../lib/core/redaction.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { logOf } from './helpers.js';

const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const BEARER = 'Bearer abcdefghijklmnopqrstuvwxyz012345';
const PEM = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----';

describe('redaction', () => {
  const r = new Redactor();
  it('redacts common secrets in string values, never keys or structure', () => {
    const input = { id: 'call-1', [AWS_KEY]: 1, nested: [{ header: `Authorization: ${BEARER}` }, `sent ${BEARER}`, `key ${AWS_KEY} and ${PEM}`, 'sk-proj-abcdefghijklmnopqrstuvwx', 'password=hunter2hunter2'] };
    const out = r.json(input) as typeof input;
    expect(Object.keys(out)).toEqual(Object.keys(input));
    expect(out.id).toBe('call-1');
    const text = JSON.stringify(out.nested);
    expect(text).not.toContain(AWS_KEY);
    expect(text).not.toContain('abcdefghijklmnopqrstuvwxyz012345');
    expect(text).not.toContain('MIIEowIBAAKCAQEA');
    expect(text).not.toContain('hunter2hunter2');
    expect(text).toContain('[REDACTED:aws_access_key_id]');
    expect(text).toContain('Authorization: [REDACTED:http_header]');
    expect(text).toContain('sent Bearer [REDACTED:bearer_token]');
    expect(text).toContain('[REDACTED:private_key]');
    expect(text).toContain('password=[REDACTED:secret_assignment]');
  });

  it('is applied before events are written: the model and the tools see the redacted form, live and on resume', async () => {
    const toolSaw: string[] = [];
    const modelSaw: string[] = [];
    const tool = defineTool({
      name: 'deploy',
      version: '1',
      description: 'd',
      input: z.object({ note: z.string() }),
      policy: 'rerun',
      async execute({ note }) {
        toolSaw.push(note);
        return `deployed with ${BEARER}`;
      },
    });
    const model = {
      async complete(req: ModelRequest): Promise<ModelResponse> {
        modelSaw.push(JSON.stringify(req.messages));
        const turn = req.messages.filter((m) => m.role === 'assistant').length;
        return turn === 0
          ? { text: '', calls: [{ providerId: 'c0', name: 'deploy', args: { note: `use ${AWS_KEY}` } }], usage: { inputTokens: 1, outputTokens: 1 }, stopReason: 'tool_use' }
          : { text: 'ok', calls: [], usage: { inputTokens: 1, outputTokens: 1 }, stopReason: 'end_turn' };
      },
    };
    const t = scriptedWorld({ tools: [tool], script: [], model });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: `my key is ${AWS_KEY}` });
    await driveRun(t.world, t.run, { worker: () => t.worker });
    const { events } = await logOf(t.world, t.run);
    const stored = JSON.stringify(events);
    expect(stored).not.toContain(AWS_KEY);
    expect(stored).not.toContain('abcdefghijklmnopqrstuvwxyz012345');
    expect(toolSaw).toEqual(['use [REDACTED:aws_access_key_id]']);
    expect(modelSaw.join('')).not.toContain(AWS_KEY);
    expect(modelSaw.join('')).not.toContain('abcdefghijklmnopqrstuvwxyz012345');
  });
});

describe('payload codec', () => {
  const run = { tenant: 't', runId: 'r' };
  it('offloads large bodies to content-addressed blobs and resolves them with a hash check', async () => {
    const blobs = new MemoryBlobStore();
    const codec = new PayloadCodec({ blobs, redactor: new Redactor(), inlineLimitBytes: 1024 });
    const big = 'x'.repeat(10_000);
    const body = await codec.encode(run, big);
    expect(body).toMatchObject({ kind: 'blob', size: 10_002, key: expect.stringMatching(/^blobs\/t\/r\/[0-9a-f]{64}\.json$/) });
    expect(body.kind === 'blob' && body.summary.length).toBe(200);
    // Same content, same key: a repeated put after a crash is harmless.
    expect(await codec.encode(run, big)).toEqual(body);
    const fresh = new PayloadCodec({ blobs, redactor: new Redactor() });
    expect(await fresh.resolve(body)).toBe(big);
    if (body.kind !== 'blob') throw new Error('expected blob');
    blobs.tamper(body.key, new TextEncoder().encode('"tampered"'));
    await expect(new PayloadCodec({ blobs, redactor: new Redactor() }).resolve(body)).rejects.toBeInstanceOf(BlobIntegrityError);
    blobs.remove(body.key);
    await expect(new PayloadCodec({ blobs, redactor: new Redactor() }).resolve(body)).rejects.toBeInstanceOf(BlobNotFoundError);
  });

  it('keeps every event far below the item limit even with many medium bodies', async () => {
    const codec = new PayloadCodec({ blobs: new MemoryBlobStore(), redactor: new Redactor() });
    const calls = Array.from({ length: 40 }, (_, i) => ({ callId: `2-${i}`, providerId: `c${i}`, name: 'x', args: { kind: 'inline' as const, value: 'y'.repeat(15_000) } }));
    const draft = await codec.encodeDraft(run, { type: 'model_response', text: null, calls, usage: { inputTokens: 1, outputTokens: 1 }, costUsd: 0, stopReason: 'tool_use' });
    expect(JSON.stringify(draft).length).toBeLessThan(300 * 1024);
  });

  it('large tool outputs are stored by reference in the log and resolved for the model', async () => {
    const huge = 'row,'.repeat(50_000);
    let sawLength = 0;
    const tool = defineTool({ name: 'dump', version: '1', description: 'd', input: z.object({}), policy: 'rerun', execute: async () => huge });
    const model = {
      async complete(req: ModelRequest): Promise<ModelResponse> {
        const toolMsg = req.messages.find((m) => m.role === 'tool');
        if (toolMsg && toolMsg.role === 'tool') sawLength = toolMsg.content.length;
        return req.messages.length === 1
          ? { text: '', calls: [{ providerId: 'a', name: 'dump', args: {} }], usage: { inputTokens: 1, outputTokens: 1 }, stopReason: 'tool_use' }
          : { text: 'done', calls: [], usage: { inputTokens: 1, outputTokens: 1 }, stopReason: 'end_turn' };
      },
    };
    const t = scriptedWorld({ tools: [tool], script: [], model });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    const w = spawnWorker(t.world);
    await driveRun(t.world, t.run, { worker: () => w });
    const { events } = await logOf(t.world, t.run);
    const result = events.find((e) => e.type === 'tool_result') as unknown as { output: { kind: string; size: number } };
    expect(result.output).toMatchObject({ kind: 'blob', size: huge.length + 2 });
    expect(sawLength).toBe(huge.length);
  });
});
