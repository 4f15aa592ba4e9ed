/**
 * The API app in-process on the real DynamoDB, S3 and SQS adapters (emulators), for the hostile
 * input tests: the support agent plus `desk`, whose one escalate call never learns its outcome, so
 * a seeded run parks with an open attention and resolutions reach the store.
 */
import { z } from 'zod';
import { DynamoStore } from '../../lib/adapters/aws/dynamo-store.js';
import { S3BlobStore } from '../../lib/adapters/aws/s3-blob-store.js';
import { SqsStepQueue } from '../../lib/adapters/aws/sqs-step-queue.js';
import { ManualClock } from '../../lib/adapters/memory/manual-clock.js';
import { CryptoIds } from '../../lib/adapters/system/crypto-ids.js';
import { createApiApp } from '../../lib/api/app.js';
import { engineRunService } from '../../lib/api/engine-service.js';
import type { Caller } from '../../lib/api/tenant.js';
import { ToolOutcomeUnknownError } from '../../lib/core/errors.js';
import { AgentRegistry } from '../../lib/authoring/registry.js';
import { defineAgent } from '../../lib/authoring/define-agent.js';
import { createEngine, type EngineDeps } from '../../lib/engine/engine.js';
import { runStep } from '../../lib/engine/step-runner.js';
import { defineTool } from '../../lib/authoring/define-tool.js';
import { ScriptedModel, StaticModelResolver } from '../../lib/models/scripted-model.js';
import { SUPPORT_MODEL_ID, supportAgent, supportModel } from '../../examples/support-agent/agent.js';
import { MemoryLedger } from '../../examples/support-agent/ledger.js';
import { SupportServices } from '../../examples/support-agent/services.js';
import { createTestStack, type DynamoTarget, type TestStack } from '../setup/emulator-context.js';

/** Callers by the `x-caller` header: 0 acme, 1 globex, 2 nobody (401). */
export const CALLERS: (Caller | undefined)[] = [{ tenant: 'acme', principal: 'alice' }, { tenant: 'globex', principal: 'bob' }, undefined];

function deskAgent() {
  const approve = defineTool({
    name: 'approve',
    version: '1',
    description: 'Approve something irreversible.',
    input: z.object({}),
    policy: 'escalate',
    timeoutMs: 1_000,
    async execute() {
      throw new ToolOutcomeUnknownError('the line went dead');
    },
  });
  return defineAgent({
    name: 'desk',
    version: '1',
    model: { id: 'scripted:desk', maxOutputTokens: 64, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 1 } },
    system: { version: 'd1', text: 'Approve.' },
    tools: [approve],
    graceMs: 1_000,
  });
}

export interface ApiWorld {
  stack: TestStack;
  store: DynamoStore;
  deps: EngineDeps;
  clock: ManualClock;
  /** Unexpected errors the app logged (its 5xx path). */
  errors: string[];
  request(path: string, init?: RequestInit & { caller?: number }): Promise<Response>;
  /** A run of acme parked on an open attention, past its rerunNotBefore. */
  parkRun(runId: string): Promise<{ callId: string }>;
  dispose(): Promise<void>;
}

export async function apiWorld(target: DynamoTarget, label: string): Promise<ApiWorld> {
  const stack = await createTestStack(target, label);
  const clock = new ManualClock(Date.now());
  const store = new DynamoStore({ doc: stack.clients.doc, tableName: stack.resources.tableName, now: () => clock.now() });
  const deps = createEngine({
    log: store,
    heads: store,
    inbox: store,
    blobs: new S3BlobStore({ s3: stack.clients.s3, bucket: stack.resources.bucket }),
    queue: new SqsStepQueue({ sqs: stack.clients.sqs, queueUrl: stack.resources.queueUrl }),
    models: new StaticModelResolver({
      [SUPPORT_MODEL_ID]: supportModel(),
      'scripted:desk': new ScriptedModel([{ text: 'Approving.', calls: [{ name: 'approve', args: {} }] }, { text: 'Done.' }]),
    }),
    registry: new AgentRegistry().register(supportAgent(new SupportServices(new MemoryLedger(), { now: () => clock.now() }))).register(deskAgent()),
    clock,
    ids: new CryptoIds(() => clock.now()),
  });
  const errors: string[] = [];
  const app = createApiApp({
    service: engineRunService(deps),
    caller: (c) => CALLERS[Number(c.req.header('x-caller') ?? 0)],
    logger: { info() {}, warn() {}, error: (m, f) => errors.push(`${m}: ${String(f?.error)}`) },
  });
  const request: ApiWorld['request'] = (path, init = {}) => {
    const { caller = 0, headers, ...rest } = init;
    return Promise.resolve(app.request(path, { ...rest, headers: { ...(headers as Record<string, string>), 'x-caller': String(caller) } }));
  };
  return {
    stack,
    store,
    deps,
    clock,
    errors,
    request,
    async parkRun(runId) {
      const res = await request('/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agent: 'desk', runId, input: 'approve it' }) });
      if (res.status !== 201) throw new Error(`could not start ${runId}: ${res.status}`);
      const run = { tenant: 'acme', runId };
      // The call's outcome stays unknown; after its deadline + grace the run parks for a person.
      await runStep(deps, run, { owner: 'seed', deadlineAt: clock.now() + 300_000 });
      await clock.advance(5_000);
      await runStep(deps, run, { owner: 'seed', deadlineAt: clock.now() + 300_000 });
      const head = await store.getHead(run);
      const callId = head?.status === 'parked' ? head.attention[0]?.callId : undefined;
      if (!callId) throw new Error(`${runId} did not park on an attention`);
      await clock.advance(5_000);
      return { callId };
    },
    dispose: () => stack.dispose(),
  };
}
