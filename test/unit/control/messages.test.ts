import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ModelRequest } from '../../../lib/core/messages.js';
import { requestApproval, requestMessage } from '../../../lib/engine/control-requests.js';
import { forkRun } from '../../../lib/engine/fork.js';
import { requestCancel } from '../../../lib/engine/requests.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { logOf } from '../engine/helpers.js';
import { drain, headOf } from './helpers.js';

const lastUser = (r: ModelRequest) => [...r.messages].reverse().find((m) => m.role === 'user');

/** Answers each user message by echoing it; the first turn looks something up. */
function chatWorld(options: { budgets?: Parameters<typeof scriptedWorld>[0]['budgets']; approval?: boolean } = {}) {
  const requests: ModelRequest[] = [];
  const lookup = defineTool({
    name: 'lookup',
    version: '1',
    description: 'Look something up.',
    input: z.object({ q: z.string() }),
    policy: 'rerun',
    ...(options.approval ? { approval: 'always' as const } : {}),
    execute: async ({ q }) => ({ found: q }),
  });
  const echo = (r: ModelRequest) => {
    requests.push(r);
    return { text: `re: ${lastUser(r)?.content}` };
  };
  const t = scriptedWorld({
    tools: [lookup],
    ...(options.budgets ? { budgets: options.budgets } : {}),
    script: [(r) => (requests.push(r), { calls: [{ name: 'lookup', args: { q: 'order' } }] }), echo, echo, echo, echo],
  });
  return { ...t, requests };
}

async function completed(options: Parameters<typeof chatWorld>[0] = {}) {
  const t = chatWorld(options);
  await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'where is my order?' });
  await drain(t.world, t.worker);
  expect((await headOf(t.world, t.run)).status).toBe('completed');
  return t;
}

describe('follow-up messages', () => {
  it('continue a completed run with its full history, the same pins and its usage so far', async () => {
    const t = await completed();
    const before = await logOf(t.world, t.run);
    await requestMessage(t.worker.deps, t.run, { input: 'and the invoice?' }, 'customer');
    await drain(t.world, t.worker);
    const { events, types, state } = await logOf(t.world, t.run);
    expect(types.slice(before.events.length)).toEqual(['user_message', 'model_started', 'model_response', 'run_completed']);
    expect(types.filter((x) => x === 'run_started')).toHaveLength(1);
    expect(events.find((e) => e.type === 'user_message')).toMatchObject({ sentBy: 'customer', input: { kind: 'inline', value: 'and the invoice?' } });
    expect(state.outcome).toMatchObject({ type: 'completed', answer: { value: 're: and the invoice?' } });
    expect(state.usage.steps).toBe(3); // 2 before, 1 for the follow-up: never reset
    expect(state.usage.inputTokens).toBeGreaterThan(before.state.usage.inputTokens);
    // The model sees everything: the task, the lookup, the first answer, then the follow-up.
    const roles = t.requests.at(-1)!.messages.map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    const head = await headOf(t.world, t.run);
    expect(head).toMatchObject({ status: 'completed', usage: { steps: 3 } });
  });

  it('keep what remains of the budgets: a run with no steps left refuses the message (409 naming it)', async () => {
    const t = await completed({ budgets: { maxSteps: 3 } });
    await requestMessage(t.worker.deps, t.run, { input: 'one more' }, 'c');
    await drain(t.world, t.worker);
    expect((await headOf(t.world, t.run)).usage.steps).toBe(3);
    await expect(requestMessage(t.worker.deps, t.run, { input: 'and another' }, 'c')).rejects.toMatchObject({
      code: 'message_conflict',
      message: 'run r cannot answer another message: 3 of 3 model calls are used',
    });
    // One that got past the check (sent before the last step finished) fails on the budget, never resets it.
    await t.storage.inbox.put(t.run, { id: 'zz-late', kind: 'message', by: 'c', input: 'sneaky' });
    await t.storage.queue.enqueue(t.run, { dedupeId: 'wake' });
    await drain(t.world, t.worker);
    const { state } = await logOf(t.world, t.run);
    expect(state.outcome).toMatchObject({ type: 'failed', code: 'budget_exceeded:steps' });
    expect(state.usage.steps).toBe(3);
  });

  it('wait in the inbox of an active run and are delivered at its next model call, never between a call and its result', async () => {
    const t = chatWorld({ approval: true });
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'where is my order?' });
    await drain(t.world, t.worker);
    expect((await headOf(t.world, t.run)).status).toBe('awaiting_approval');
    await requestMessage(t.worker.deps, t.run, { input: 'also, I moved house' }, 'customer');
    await drain(t.world, t.worker);
    // Received, not yet delivered: the call of this turn still waits.
    const mid = await logOf(t.world, t.run);
    expect(mid.types.at(-1)).toBe('user_message');
    expect(mid.state.pendingMessages).toHaveLength(1);
    expect((await headOf(t.world, t.run)).status).toBe('awaiting_approval');
    await requestApproval(t.worker.deps, t.run, { callId: '3-0', decision: 'approve' }, 'ops');
    await drain(t.world, t.worker);
    const roles = t.requests.at(-1)!.messages.map((m) => `${m.role}${m.role === 'user' ? `:${m.content}` : ''}`);
    expect(roles).toEqual(['user:where is my order?', 'assistant', 'tool', 'user:also, I moved house']);
    const { state } = await logOf(t.world, t.run);
    expect(state.outcome).toMatchObject({ type: 'completed', answer: { value: 're: also, I moved house' } });
  });

  it('are delivered once per messageId; the same id with other content is a 409', async () => {
    const t = await completed();
    await requestMessage(t.worker.deps, t.run, { input: 'hello?', messageId: 'm-1' }, 'c');
    await requestMessage(t.worker.deps, t.run, { input: 'hello?', messageId: 'm-1' }, 'c'); // a retry
    await expect(requestMessage(t.worker.deps, t.run, { input: 'bye', messageId: 'm-1' }, 'c')).rejects.toMatchObject({ code: 'message_conflict' });
    await drain(t.world, t.worker);
    // Even after it was ingested (and its item deleted), the same id is not delivered again.
    await requestMessage(t.worker.deps, t.run, { input: 'hello?', messageId: 'm-1' }, 'c');
    await drain(t.world, t.worker);
    const { types } = await logOf(t.world, t.run);
    expect(types.filter((x) => x === 'user_message')).toHaveLength(1);
  });

  it('can be tried another way: a fork right after a follow-up with `input` replaces that message', async () => {
    const t = await completed();
    await requestMessage(t.worker.deps, t.run, { input: 'and the invoice?' }, 'customer');
    await drain(t.world, t.worker);
    const { events } = await logOf(t.world, t.run);
    const at = events.find((e) => e.type === 'user_message')!.seq;
    await forkRun(t.worker.deps, { tenant: 't', from: 'r', atSeq: at, runId: 'r-other', input: 'and the receipt?' });
    await drain(t.world, t.worker);
    const fork = await logOf(t.world, { tenant: 't', runId: 'r-other' });
    expect(fork.events.find((e) => e.type === 'user_message')).toMatchObject({ seq: at, input: { value: 'and the receipt?' }, sentBy: 'customer' });
    expect(fork.events[0]).toMatchObject({ input: { value: 'where is my order?' } }); // the task itself is kept
    expect(fork.state.outcome).toMatchObject({ type: 'completed', answer: { value: 're: and the receipt?' } });
  });

  it('are refused for failed and cancelled runs (409 naming the state) and unknown runs (404)', async () => {
    const t = chatWorld();
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'x' });
    await requestCancel(t.worker.deps, t.run, 'ops');
    await drain(t.world, t.worker);
    await expect(requestMessage(t.worker.deps, t.run, { input: 'hi' }, 'c')).rejects.toThrow(
      'run r is cancelled: only a completed or active run takes messages (fork it to continue)',
    );
    await expect(requestMessage(t.worker.deps, { tenant: 't', runId: 'nope' }, { input: 'hi' }, 'c')).rejects.toMatchObject({ code: 'run_not_found' });
    await expect(requestMessage(t.worker.deps, t.run, { input: 'hi', messageId: 'bad id' }, 'c')).rejects.toMatchObject({ code: 'validation_error', issues: [{ path: 'messageId' }] });
  });
});
