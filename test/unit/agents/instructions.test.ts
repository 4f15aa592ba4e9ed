import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { agentTool } from '../../../lib/authoring/agent-tool.js';
import { InstructionsError } from '../../../lib/authoring/instructions.js';
import type { InstructionsContext } from '../../../lib/authoring/types.js';
import { sha256Hex } from '../../../lib/support/hash.js';
import type { ModelRequest } from '../../../lib/core/messages.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { forkRun } from '../../../lib/engine/fork.js';
import { ScriptedModel } from '../../../lib/models/scripted-model.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { spawnWorker } from '../../../lib/testing/world.js';
import { haltAt, logOf } from '../engine/helpers.js';
import { agentWorld, nothingWritten } from './agent-world.js';

const input = z.object({ customer: z.string(), vip: z.boolean().default(false) });
interface App {
  policy(tenant: string): Promise<string>;
}
const price = { inputPerMTokUsd: 1, outputPerMTokUsd: 2 };

/** An agent whose instructions count their calls and can be told to throw. */
function concierge(version = '1', tag = 'v1') {
  const calls: { input: { customer: string; vip: boolean }; ctx: InstructionsContext<App> }[] = [];
  const state = { explode: false };
  const agent = defineAgent<typeof input, App>({
    name: 'concierge',
    version,
    model: { id: 'scripted:test', maxOutputTokens: 256, price },
    input,
    system: {
      version: `s-${tag}`,
      text: async (i, ctx) => {
        calls.push({ input: i, ctx });
        if (state.explode) throw new Error('policy store is down');
        return `[${tag}] Serve ${i.customer}${i.vip ? ' (VIP)' : ''}. Policy: ${await ctx.app.policy(ctx.tenant)}`;
      },
    },
    tools: [],
  });
  return { agent, calls, state };
}

const app: App = { policy: async (tenant) => `refunds up to 50 EUR for ${tenant}` };
const loaderCalls: unknown[] = [];
const loader = (request: unknown) => {
  loaderCalls.push(request);
  return app;
};
const run = { tenant: 't1', runId: 'r1' };

describe('instructions functions (system.text as a function)', () => {
  it('builds the prompt once at start from the parsed input and the app context, and pins text and hash', async () => {
    const c = concierge();
    const seen: ModelRequest[] = [];
    const model = new ScriptedModel([(r) => (seen.push(r), { text: 'hello' })]);
    const { world, worker } = agentWorld([c.agent], { 'scripted:test': model }, loader);
    loaderCalls.length = 0;
    await startRun(worker.deps, { ...run, agent: 'concierge', input: { customer: 'Ann', vip: true } });
    expect(c.calls).toHaveLength(1);
    expect(c.calls[0]!.input).toEqual({ customer: 'Ann', vip: true });
    expect(c.calls[0]!.ctx).toMatchObject({ tenant: 't1', runId: 'r1', agent: { name: 'concierge', version: '1' } });
    expect(loaderCalls).toEqual([{ tenant: 't1', runId: 'r1', agent: { name: 'concierge', version: '1' } }]);
    const text = '[v1] Serve Ann (VIP). Policy: refunds up to 50 EUR for t1';
    const { events } = await logOf(world, run);
    expect(events[0]!.prompt).toEqual({ version: 's-v1', text: { kind: 'inline', value: text }, sha256: sha256Hex(text), resolved: true });
    await driveRun(world, run, { worker: () => worker });
    expect(seen[0]!.system).toBe(text);
  });

  it('the instructions function gets the schema output (defaults filled in)', async () => {
    const c = concierge();
    const { worker } = agentWorld([c.agent], { 'scripted:test': new ScriptedModel([{ text: 'x' }]) }, loader);
    await startRun(worker.deps, { ...run, agent: 'concierge', input: { customer: 'Bo' } });
    expect(c.calls[0]!.input).toEqual({ customer: 'Bo', vip: false });
  });

  it('a resumed run (after a crash) and a retried create never call it again', async () => {
    const c = concierge();
    const seen: string[] = [];
    const model = new ScriptedModel([(r) => (seen.push(r.system), { text: 'one' })]);
    const { world } = agentWorld([c.agent], { 'scripted:test': model }, loader);
    const crash = haltAt('after-append:model_started');
    const first = spawnWorker(world, crash);
    await startRun(first.deps, { ...run, agent: 'concierge', input: { customer: 'Ann' } });
    c.state.explode = true;
    let n = 0;
    const result = await driveRun(world, run, { worker: () => (n++ === 0 ? first : spawnWorker(world)) });
    expect(crash.fired).toBe(true);
    expect(result.crashes).toBe(1);
    expect(result.head.status).toBe('completed');
    // The same create again (a client retry): answered from the log, the function is not asked.
    const again = await startRun(spawnWorker(world).deps, { ...run, agent: 'concierge', input: { customer: 'Ann' } });
    expect(again.created).toBe(false);
    expect(c.calls).toHaveLength(1);
    expect(seen.every((s) => s.startsWith('[v1] Serve Ann.'))).toBe(true);
  });

  it('a function that throws refuses the start with a stable code, and nothing is written', async () => {
    const c = concierge();
    c.state.explode = true;
    const { world, worker } = agentWorld([c.agent], { 'scripted:test': new ScriptedModel([{ text: 'x' }]) }, loader);
    const error = await startRun(worker.deps, { ...run, agent: 'concierge', input: { customer: 'Ann' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InstructionsError);
    expect((error as InstructionsError).code).toBe('instructions_failed');
    expect((error as Error).message).toContain('concierge@1');
    expect((error as Error).message).toContain('policy store is down');
    expect(await nothingWritten(world, run)).toBe(true);
  });

  it('a loader that throws, or a function returning no text, refuses the start too', async () => {
    const c = concierge();
    const failing = agentWorld([c.agent], { 'scripted:test': new ScriptedModel([{ text: 'x' }]) }, () => {
      throw new Error('no db');
    });
    await expect(startRun(failing.worker.deps, { ...run, agent: 'concierge', input: { customer: 'Ann' } })).rejects.toThrow(/application context.*no db/);
    expect(await nothingWritten(failing.world, run)).toBe(true);
    const blank = defineAgent({ name: 'blank', version: '1', model: { id: 'scripted:test', maxOutputTokens: 10 }, system: { version: 's', text: () => '  ' }, tools: [] });
    const b = agentWorld([blank], { 'scripted:test': new ScriptedModel([{ text: 'x' }]) });
    await expect(startRun(b.worker.deps, { ...run, agent: 'blank', input: 'hi' })).rejects.toBeInstanceOf(InstructionsError);
    expect(await nothingWritten(b.world, run)).toBe(true);
  });

  it('a fork keeps the source text; a fork re-pinned to a new version builds that version’s text once', async () => {
    const v1 = concierge('1', 'v1');
    const v2 = concierge('2', 'v2');
    const { world, worker } = agentWorld([v1.agent, v2.agent], { 'scripted:test': new ScriptedModel([{ text: 'ok' }]) }, loader);
    await startRun(worker.deps, { ...run, agent: 'concierge', version: '1', input: { customer: 'Ann' } });
    await driveRun(world, run, { worker: () => worker });
    await forkRun(worker.deps, { tenant: 't1', from: 'r1', atSeq: 1, runId: 'same', input: { customer: 'Cy' } });
    const same = await logOf(world, { tenant: 't1', runId: 'same' });
    expect((same.events[0]!.prompt as { text: { value: string } }).text.value).toContain('Serve Ann');
    expect(v1.calls).toHaveLength(1);
    await forkRun(worker.deps, { tenant: 't1', from: 'r1', atSeq: 1, runId: 'newer', version: '2' });
    const newer = await logOf(world, { tenant: 't1', runId: 'newer' });
    expect((newer.events[0]!.prompt as { text: { value: string } }).text.value).toMatch(/^\[v2\] Serve Ann\./);
    expect(v2.calls.map((c) => c.ctx.runId)).toEqual(['newer']);
    expect(v1.calls).toHaveLength(1);
  });

  it("a child run's instructions are built at the child's start, knowing its parent; a throw is an error result", async () => {
    const c = concierge();
    const tool = agentTool(c.agent, { name: 'ask_concierge', description: 'delegate' });
    const parent = defineAgent({ name: 'parent', version: '1', model: { id: 'scripted:parent', maxOutputTokens: 256, price }, system: { version: 's', text: 'Delegate.' }, tools: [tool] });
    const parentModel = new ScriptedModel([{ calls: [{ name: 'ask_concierge', args: { customer: 'Ann' } }] }, { text: 'done' }]);
    const { world, worker } = agentWorld([parent], { 'scripted:parent': parentModel, 'scripted:test': new ScriptedModel([{ text: 'served' }]) }, loader);
    const p = { tenant: 't1', runId: 'p1' };
    await startRun(worker.deps, { ...p, agent: 'parent', input: 'go' });
    await driveRun(world, p, { worker: () => worker });
    expect(c.calls).toHaveLength(1);
    expect(c.calls[0]!.ctx.parent).toEqual({ runId: 'p1', callId: '3-0' });

    c.state.explode = true;
    const p2 = { tenant: 't1', runId: 'p2' };
    await startRun(worker.deps, { ...p2, agent: 'parent', input: 'go' });
    const result = await driveRun(world, p2, { worker: () => worker });
    expect(result.head.status).toBe('completed');
    const { state, events } = await logOf(world, p2);
    expect(state.calls['3-0']!.result).toMatchObject({ ok: false, errorCode: 'child_instructions_failed' });
    // The reservation made for the child is given back: only the model calls are charged.
    const responses = events.filter((e) => e.type === 'model_response') as unknown as { costUsd: number }[];
    expect(state.usage.costUsd).toBeCloseTo(responses.reduce((s, e) => s + e.costUsd, 0), 12);
  });
});
