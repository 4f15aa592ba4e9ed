/**
 * Attachments end to end on the emulators with the real AWS SDK clients: the upload goes through
 * the API into S3 (fauxqs), a run started through the API refers to it, the worker resolves the
 * bytes from S3 when it builds the request, and an OpenAI-compatible model on a local fixture
 * server receives them as an image_url data URL. The log (DynamoDB) holds only the reference.
 */
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import { SqsStepQueue } from '../../lib/adapters/aws/sqs-step-queue.js';
import { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { CryptoIds } from '../../lib/adapters/system/crypto-ids.js';
import { createApiApp } from '../../lib/api/app.js';
import { engineRunService } from '../../lib/api/engine-service.js';
import { attachment } from '../../lib/authoring/attachment.js';
import { defineAgent } from '../../lib/authoring/define-agent.js';
import { AgentRegistry } from '../../lib/authoring/registry.js';
import { createEngine, type EngineDeps } from '../../lib/engine/engine.js';
import { runStep } from '../../lib/engine/step-runner.js';
import { OpenAiCompatibleClient } from '../../lib/models/openai-compatible.js';
import { StaticModelResolver } from '../../lib/models/scripted-model.js';
import { InstantClock, loadFixture, startFixtureServer, type FixtureServer } from '../unit/models/fixture-server.js';
import { pngBytes } from '../unit/attachments/fixtures.js';
import { createTestStack, endpointsFor, type TestStack } from '../setup/emulator-context.js';

const target = endpointsFor('dynamodb-local') ? 'dynamodb-local' : 'dynalite';
const MODEL_ID = 'openai:gpt-4.1-mini';

describe.runIf(endpointsFor(target))(`attachments through the API, S3 and the worker on ${target}`, () => {
  let stack: TestStack;
  let server: FixtureServer;
  let deps: EngineDeps;
  let store: DynamoStore;
  let request: (path: string, init?: RequestInit) => Promise<Response>;

  beforeAll(async () => {
    stack = await createTestStack(target, 'attach');
    server = await startFixtureServer([loadFixture('openai/text-answer.json')]);
    const clock = new ManualClock(Date.now());
    store = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => clock.now() });
    const model = new OpenAiCompatibleClient({
      baseUrl: server.url,
      model: 'gpt-4.1-mini',
      apiKey: 'sk-logbook-test',
      clock: new InstantClock(),
      random: () => 0.5,
    });
    const agent = defineAgent({
      name: 'claims',
      version: '1',
      model: { id: MODEL_ID, maxOutputTokens: 128, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } },
      system: { version: 'c1', text: 'Judge damage from the photo.' },
      input: z.object({ task: z.string(), photo: attachment({ accept: ['image'] }) }),
      tools: [],
    });
    deps = createEngine({
      log: store,
      heads: store,
      inbox: store,
      blobs: new S3BlobStore({ s3: stack.clients.s3, bucket: stack.resources.bucket }),
      queue: new SqsStepQueue({ sqs: stack.clients.sqs, queueUrl: stack.resources.queueUrl }),
      models: new StaticModelResolver({ [MODEL_ID]: model }),
      registry: new AgentRegistry().register(agent),
      clock,
      ids: new CryptoIds(() => clock.now()),
    });
    const app = createApiApp({ service: engineRunService(deps), caller: (c) => ({ tenant: c.req.header('x-tenant') ?? 'acme', principal: 'alice' }) });
    request = (path, init = {}) => Promise.resolve(app.request(path, init));
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await stack?.dispose();
  });

  it('uploads to S3, starts a run that refers to it, and the model receives the bytes; the log holds only the reference', async () => {
    const photo = pngBytes(150_000, 4);
    const sha256 = createHash('sha256').update(photo).digest('hex');
    const uploaded = await request('/attachments?name=mug.png', {
      method: 'POST',
      headers: { 'content-type': 'image/png' },
      body: photo as Uint8Array<ArrayBuffer>,
    });
    expect(uploaded.status).toBe(201);
    const { ref } = (await uploaded.json()) as { ref: Record<string, unknown> };
    expect(ref).toEqual({ kind: 'blob', sha256, mediaType: 'image/png', bytes: 150_000, name: 'mug.png' });

    // In S3 under the tenant, byte for byte.
    const object = await stack.clients.s3.send(new GetObjectCommand({ Bucket: stack.resources.bucket, Key: `attachments/acme/${sha256}` }));
    expect(Buffer.from(await object.Body!.transformToByteArray()).equals(Buffer.from(photo))).toBe(true);

    // Another tenant cannot refer to it.
    const foreign = await request('/runs', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-tenant': 'globex' },
      body: JSON.stringify({ agent: 'claims', runId: 'c-globex', input: { task: 'look', photo: ref } }),
    });
    expect(foreign.status).toBe(400);
    expect(await store.getHead({ tenant: 'globex', runId: 'c-globex' })).toBeUndefined();

    const started = await request('/runs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'claims', runId: 'c-1', input: { task: 'Is the mug broken?', photo: ref } }),
    });
    expect(started.status).toBe(201);
    const run = { tenant: 'acme', runId: 'c-1' };
    for (let i = 0; i < 5 && (await store.getHead(run))?.status === 'running'; i++) {
      await runStep(deps, run, { owner: 'test', deadlineAt: Date.now() + 300_000 });
    }
    expect((await store.getHead(run))?.status).toBe('completed');

    // The model's wire: the input's text, then the image as a data URL of exactly the uploaded bytes.
    const sent = JSON.parse(server.requests[0]!.body) as { messages: { role: string; content: unknown }[] };
    const user = sent.messages.find((m) => m.role === 'user')!.content as { type: string; text?: string; image_url?: { url: string } }[];
    expect(user.map((p) => p.type)).toEqual(['text', 'image_url']);
    expect(JSON.parse(user[0]!.text!)).toEqual({ task: 'Is the mug broken?', photo: ref });
    const url = user[1]!.image_url!.url;
    expect(url.startsWith('data:image/png;base64,')).toBe(true);
    expect(Buffer.from(url.slice('data:image/png;base64,'.length), 'base64').equals(Buffer.from(photo))).toBe(true);

    // The log: the reference in run_started, no bytes anywhere; S3 holds the upload and nothing of it under the run.
    const { events } = await store.read(run, { afterSeq: 0 });
    expect(events[0]).toMatchObject({ type: 'run_started', input: { kind: 'inline', value: { task: 'Is the mug broken?', photo: ref } } });
    expect(JSON.stringify(events)).not.toContain(Buffer.from(photo.subarray(0, 3000)).toString('base64'));
    const listed = await stack.clients.s3.send(new ListObjectsV2Command({ Bucket: stack.resources.bucket }));
    const keys = (listed.Contents ?? []).map((o) => o.Key);
    expect(keys).toContain(`attachments/acme/${sha256}`);
    expect(keys.filter((k) => k?.startsWith('blobs/acme/c-1/'))).toEqual([]);
  }, 60_000);
});
