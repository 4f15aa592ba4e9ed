/**
 * Agents for the inspector's action tests (test/e2e/ui-actions.test.ts), loaded by the local
 * stack's worker processes: `approver` asks a person to approve a refund (its schema refuses a
 * non-integer amount), `waiter` waits for a signal whose payload has text, choice, number and
 * checkbox fields, `chatty` looks something up and answers (then answers follow-ups), and
 * `orphan` pins a model this deployment serves only once the file ORPHAN_MODEL_FLAG exists: before
 * that its runs park (missing_model, a run-level park a person retries or fails).
 */
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { ScriptedModel, defineAgent, defineAgents, defineTool, waitForSignal, type Agents, type ModelRequest } from 'logbook';

const price = { inputPerMTokUsd: 1, outputPerMTokUsd: 2 };
export const ORPHAN_MODEL_ID = 'openai:orphan-model';

function lastTool(r: ModelRequest): { name: string; ok: boolean; content: string } | undefined {
  const m = [...r.messages].reverse().find((x) => x.role === 'tool');
  return m?.role === 'tool' ? { name: m.name, ok: !m.isError, content: m.content } : undefined;
}

function lastUser(r: ModelRequest): string {
  const m = [...r.messages].reverse().find((x) => x.role === 'user');
  return m?.role === 'user' ? m.content : '';
}

export function createAgents(env: Record<string, string | undefined> = process.env): Agents {
  const refund = defineTool({
    name: 'issue_refund',
    version: '1.0.0',
    description: 'Refund an order.',
    // The refinement is not in the JSON Schema the run pins: the page cannot check it, the API does.
    input: z
      .object({ orderId: z.string().min(1), amountCents: z.number().int().positive().max(100_000) })
      .strict()
      .refine((a) => a.amountCents <= 1299, { path: ['amountCents'], message: 'at most the order total, 1299' }),
    policy: 'idempotency_key',
    approval: 'always',
    async execute({ orderId, amountCents }) {
      return { refundId: `rf-${orderId}-${amountCents}` };
    },
  });
  const waitForParcel = waitForSignal({
    name: 'wait_for_return',
    description: 'Wait until the parcel is back.',
    signal: 'parcel_returned',
    payload: z
      .object({ trackingId: z.string().min(3), condition: z.enum(['damaged', 'intact']), weightKg: z.number().min(0).optional(), insured: z.boolean() })
      .strict(),
    timeoutSeconds: 86_400,
  });
  const lookup = defineTool({
    name: 'lookup',
    version: '1.0.0',
    description: 'Look up an order.',
    input: z.object({ orderId: z.string() }),
    policy: 'rerun',
    async execute({ orderId }) {
      return { orderId, status: 'delivered' };
    },
  });
  const followUps = (r: ModelRequest) => ({ text: `About "${lastUser(r)}": noted.` });
  const approver = defineAgent({
    name: 'approver',
    version: '1.0.0',
    model: { id: 'scripted:approver-v1', maxOutputTokens: 256, price },
    system: { version: 'a1', text: 'Refund with approval.' },
    tools: [refund],
  });
  const waiter = defineAgent({
    name: 'waiter',
    version: '1.0.0',
    model: { id: 'scripted:waiter-v1', maxOutputTokens: 256, price },
    system: { version: 'w1', text: 'Wait for the parcel.' },
    tools: [waitForParcel],
  });
  const chatty = defineAgent({
    name: 'chatty',
    version: '1.0.0',
    model: { id: 'scripted:chatty-v1', maxOutputTokens: 256, price },
    system: { version: 'c1', text: 'Answer.' },
    tools: [lookup],
  });
  const orphan = defineAgent({
    name: 'orphan',
    version: '1.0.0',
    model: { id: ORPHAN_MODEL_ID, maxOutputTokens: 256, price },
    system: { version: 'o1', text: 'Answer.' },
    tools: [],
  });
  const models: Record<string, () => ScriptedModel> = {
    'scripted:approver-v1': () =>
      new ScriptedModel([
        { text: 'Refunding.', calls: [{ name: 'issue_refund', args: { orderId: 'o_1', amountCents: 1299 } }] },
        (r) => {
          const t = lastTool(r);
          return { text: t?.ok ? `Refund done: ${t.content}` : `No refund: ${t?.content ?? ''}` };
        },
        followUps,
      ]),
    'scripted:waiter-v1': () =>
      new ScriptedModel([
        { text: 'Waiting for the parcel.', calls: [{ name: 'wait_for_return', args: {} }] },
        (r) => ({ text: `Parcel back: ${lastTool(r)?.content ?? ''}` }),
        followUps,
      ]),
    'scripted:chatty-v1': () =>
      new ScriptedModel([
        { text: 'Looking it up.', calls: [{ name: 'lookup', args: { orderId: 'o_9' } }] },
        (r) => ({ text: `It is ${lastTool(r)?.content ?? ''}; ${lastUser(r)}` }),
        followUps,
      ]),
  };
  // Served only once the flag file exists (each worker checks on every call).
  Object.defineProperty(models, ORPHAN_MODEL_ID, {
    enumerable: true,
    get: () => (env.ORPHAN_MODEL_FLAG && existsSync(env.ORPHAN_MODEL_FLAG) ? () => new ScriptedModel([{ text: 'Back with a model: hello.' }]) : undefined),
  });
  return defineAgents({ agents: [approver, waiter, chatty, orphan], models });
}

export default () => createAgents();
