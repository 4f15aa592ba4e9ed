import { describe, expect, it } from 'vitest';
import { driveRun, formatHarnessReport, runCrashHarness, spawnWorker, type World } from 'logbook/testing';
import { rootSpanIdOf, startRun, traceIdOf, type TraceSpan } from 'logbook/engine';
import { foldLog } from '../../../lib/core/fold.js';
import { supportScenario, type SupportWorld } from '../../../examples/support-agent/support-world.js';
import { familyWorld } from '../children/family-agents.js';
import { z } from 'zod';
import { defineAgent, defineTool, ScriptedModel, StaticModelResolver } from 'logbook';
import { AgentRegistry } from 'logbook/engine';
import { ManualClock, memoryStorage } from 'logbook/testing';
import { collectTracer } from './collect-tracer.js';
import { logOf, traceFailures } from './trace-invariants.js';

type FamilyWorld = ReturnType<typeof familyWorld>;
const run = { tenant: supportScenario.request.tenant, runId: supportScenario.request.runId ?? 'harness-run' };

describe('spans projected from the log, across crashes', () => {
  it('every crash point, pair of crashes and frozen worker leaves one trace, one span per model call and tool attempt, no orphan', async () => {
    const worlds: { world: SupportWorld; tracer: ReturnType<typeof collectTracer> }[] = [];
    const report = await runCrashHarness(
      {
        ...supportScenario,
        world: () => {
          const tracer = collectTracer();
          const world = { ...supportScenario.world(), tracer };
          worlds.push({ world, tracer });
          return world;
        },
      },
      { doubleCrashStride: 9 },
    );
    expect(report.failed, formatHarnessReport(report)).toBe(0);
    expect(worlds.length).toBeGreaterThan(40);
    let resent = 0;
    for (const [i, { world, tracer }] of worlds.entries()) {
      const log = await logOf(world, run);
      if (!log.some((e) => e.type === 'run_completed')) continue; // a world the harness set up but did not finish (none expected)
      expect(traceFailures(tracer.spans, log, run), `world ${i}`).toEqual([]);
      resent += tracer.spans.length - new Set(tracer.spans.map((s) => s.spanId)).size;
    }
    // Crashes between a step's spans going out and its head moving re-send them (same ids).
    expect(resent).toBeGreaterThan(0);
  }, 240_000);
});

describe('spans of waits, approvals, follow-ups and child runs', () => {
  it('a signal wait, an edited approval and a follow-up message: spans hold at every crash point', async () => {
    const { guardedScenario } = await import('../../../examples/support-agent/guarded-world.js');
    const guardedRun = { tenant: guardedScenario.request.tenant, runId: guardedScenario.request.runId ?? 'harness-run' };
    const worlds: { world: World; tracer: ReturnType<typeof collectTracer> }[] = [];
    const report = await runCrashHarness(
      {
        ...guardedScenario,
        world: () => {
          const tracer = collectTracer();
          const world = { ...guardedScenario.world(), tracer };
          worlds.push({ world, tracer });
          return world;
        },
      } as typeof guardedScenario,
      { doubleCrashStride: 0 },
    );
    expect(report.failed, formatHarnessReport(report)).toBe(0);
    for (const [i, { world, tracer }] of worlds.entries()) {
      const log = await logOf(world, guardedRun);
      const failures = traceFailures(tracer.spans, log, guardedRun);
      if (failures.length > 0 && process.env.TRACE_DEBUG) {
        console.log(log.map((e) => `${e.seq} ${e.type} e${e.by.epoch} ${'callId' in e ? e.callId : ''} ${'attempt' in e ? e.attempt : ''}`).join('\n'));
        console.log(tracer.spans.map((s) => `${s.name} ${s.spanId} <- ${s.parentSpanId} ${JSON.stringify(s.attributes['logbook.step.epoch'] ?? s.attributes['logbook.seq'])}`).join('\n'));
      }
      expect(failures, `world ${i}`).toEqual([]);
    }
    const spans = worlds[0]!.tracer.spans;
    const wait = spans.find((s) => s.name.startsWith('wait '));
    expect(wait?.attributes).toMatchObject({ 'logbook.wait.kind': 'signal', 'logbook.tool.outcome': 'ok', 'logbook.tool.source': 'signal' });
    const approval = spans.find((s) => s.name.startsWith('approval '));
    expect(approval?.attributes).toMatchObject({ 'logbook.approval.decision': 'edit' });
    // The approval waited for a person across steps: it starts in one step and is parented there.
    expect(approval?.parentSpanId).toMatch(/^[0-9a-f]{16}$/);
  }, 240_000);

  it("a child run: the parent's invoke_agent span links to the child's trace, whose root links back", async () => {
    const worlds: { world: FamilyWorld; tracer: ReturnType<typeof collectTracer> }[] = [];
    const familyRun = { tenant: 't', runId: 'plan-1' };
    const report = await runCrashHarness(
      {
        name: 'planner calls researcher (traced)',
        world: () => {
          const tracer = collectTracer();
          const world = { ...familyWorld(), tracer };
          worlds.push({ world, tracer });
          return world;
        },
        request: { tenant: 't', runId: 'plan-1', agent: 'planner', input: 'plan a mug shop' },
        sideEffects: (w) => w.effects.all(),
        resolver: () => () => 'retry',
      },
      { doubleCrashStride: 0 },
    );
    expect(report.failed, formatHarnessReport(report)).toBe(0);
    for (const [i, { world, tracer }] of worlds.entries()) {
      const log = await logOf(world, familyRun);
      const childWait = log.find((e) => e.type === 'tool_started' && e.wait?.kind === 'child');
      if (childWait?.type !== 'tool_started' || childWait.wait?.kind !== 'child') throw new Error(`world ${i}: no child call`);
      const childRun = { tenant: 't', runId: childWait.wait.runId };
      const mine = tracer.spans.filter((s) => s.traceId === traceIdOf(familyRun));
      const theirs = tracer.spans.filter((s) => s.traceId === traceIdOf(childRun));
      expect(mine.length + theirs.length, `world ${i}: every span in one of the two traces`).toBe(tracer.spans.length);
      expect(traceFailures(mine, log, familyRun), `world ${i} parent`).toEqual([]);
      expect(traceFailures(theirs, await logOf(world, childRun), childRun), `world ${i} child`).toEqual([]);
      const call = mine.find((s) => s.name === 'invoke_agent researcher');
      expect(call?.links, `world ${i}`).toEqual([{ traceId: traceIdOf(childRun), spanId: rootSpanIdOf(childRun), attributes: { 'logbook.link': 'child_run' } }]);
      const childRoot = theirs.find((s) => s.spanId === rootSpanIdOf(childRun));
      expect(childRoot?.links?.[0]).toMatchObject({ traceId: traceIdOf(familyRun), spanId: rootSpanIdOf(familyRun) });
      if (i > 0) continue;
      // The parent's root carries the run's usage with the child's rolled in: its own model calls' plus the child's.
      const tokens = (spans: TraceSpan[]) => spans.filter((s) => s.name.startsWith('chat ')).reduce((n, s) => n + Number(s.attributes['gen_ai.usage.input_tokens'] ?? 0), 0);
      const root = mine.find((s) => s.spanId === rootSpanIdOf(familyRun));
      expect(tokens(theirs)).toBeGreaterThan(0);
      expect(root?.attributes['gen_ai.usage.input_tokens']).toBe(tokens(mine) + tokens(theirs));
      expect(root?.attributes['gen_ai.usage.input_tokens']).toBe(foldLog(log).usage.inputTokens);
    }
  }, 240_000);

  it('payloads only when the application opts in, as the log holds them (redacted)', async () => {
    const KEY = 'sk_live_abcdefghijklmnop1234';
    const lookup = defineTool({
      name: 'lookup',
      version: '1',
      description: 'look a customer up',
      input: z.object({ customer: z.string(), key: z.string() }),
      policy: 'rerun',
      execute: async ({ customer }) => ({ customer, apiKey: KEY, plan: 'gold' }),
    });
    const agent = defineAgent({
      name: 'keys',
      version: '1',
      model: { id: 'scripted:keys', maxOutputTokens: 256, price: { inputPerMTokUsd: 1, outputPerMTokUsd: 2 } },
      system: { version: '1', text: 'look things up' },
      tools: [lookup],
    });
    const spansOf = async (payloads: boolean) => {
      const tracer = { ...collectTracer(), ...(payloads ? { payloads: true } : {}) };
      const model = new ScriptedModel([{ calls: [{ name: 'lookup', args: { customer: 'c_1', key: KEY } }] }, { text: `done with ${KEY}` }]);
      const world: World = { storage: memoryStorage(), clock: new ManualClock(), registry: new AgentRegistry().register(agent), models: new StaticModelResolver({ 'scripted:keys': model }), tracer };
      const worker = spawnWorker(world);
      const keysRun = { tenant: 't', runId: `keys-${payloads}` };
      await startRun(worker.deps, { ...keysRun, agent: 'keys', input: 'who is c_1?' });
      await driveRun(world, keysRun, { worker: () => worker });
      return tracer.spans;
    };
    const payloadKeys = ['gen_ai.tool.call.arguments', 'gen_ai.tool.call.result', 'gen_ai.output.messages'];
    const off = await spansOf(false);
    expect(off.some((s) => s.name.startsWith('execute_tool '))).toBe(true);
    expect(off.some((s) => payloadKeys.some((k) => k in s.attributes))).toBe(false);
    const on = await spansOf(true);
    const tool = on.find((s) => s.name === 'execute_tool lookup');
    expect(JSON.parse(String(tool?.attributes['gen_ai.tool.call.arguments']))).toEqual({ customer: 'c_1', key: '[REDACTED:stripe_key]' });
    expect(JSON.parse(String(tool?.attributes['gen_ai.tool.call.result']))).toEqual({ customer: 'c_1', apiKey: expect.stringMatching(/^\[REDACTED:/), plan: 'gold' });
    const answer = on.filter((s) => s.name.startsWith('chat ')).at(-1);
    expect(JSON.parse(String(answer?.attributes['gen_ai.output.messages']))).toEqual({ text: 'done with [REDACTED:stripe_key]', calls: [] });
    // The log's redaction applies to every payload on every span.
    expect(JSON.stringify(on)).not.toContain(KEY);
  });
});
