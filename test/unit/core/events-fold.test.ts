import { describe, expect, it } from 'vitest';
import { CorruptLogError } from '../../../lib/core/errors.js';
import { foldLog, foldMore } from '../../../lib/core/fold.js';
import { parseEvent } from '../../../lib/core/events.js';
import { z } from 'zod';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { driveRun } from '../../../lib/testing/driver.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';

const echo = defineTool({
  name: 'echo',
  version: '1',
  description: 'echo',
  input: z.object({ text: z.string() }),
  policy: 'rerun',
  async execute({ text }) {
    return text;
  },
});

async function completedLog() {
  const t = scriptedWorld({ tools: [echo], script: [{ calls: [{ name: 'echo', args: { text: 'hi' } }] }, { text: 'bye' }] });
  await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
  await driveRun(t.world, t.run, { worker: () => t.worker });
  return (await t.storage.log.read(t.run, { afterSeq: 0 })).events as Record<string, unknown>[];
}

describe('events and fold', () => {
  it('validates events read back and names the corrupt seq', () => {
    expect(() => parseEvent({ v: 1, seq: 3, at: 0, by: { epoch: 1, nonce: 'n' }, type: 'tool_result' })).toThrow(CorruptLogError);
    expect(() => parseEvent({ v: 1, seq: 3, at: 0, by: { epoch: 1, nonce: 'n' }, type: 'nope' })).toThrow(/seq 3/);
  });

  it('folds deterministically: the same log gives the same state, in one go or in parts', async () => {
    const log = await completedLog();
    const whole = foldLog(log);
    expect(foldLog(structuredClone(log))).toEqual(whole);
    expect(foldMore(foldLog(log.slice(0, 4)), log.slice(4))).toEqual(whole);
    expect(whole.outcome).toMatchObject({ type: 'completed' });
    expect(whole.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('rejects a gap in seq, a repeat, and an event after the end', async () => {
    const log = await completedLog();
    expect(() => foldLog([log[0], log[2]])).toThrow(/expected seq 2/);
    expect(() => foldLog([log[0], log[1], log[1]])).toThrow(CorruptLogError);
    const extra = { ...log[1], seq: log.length + 1 };
    expect(() => foldLog([...log, extra])).toThrow(/after the run ended/);
  });

  it('rejects impossible orders: a result before its start, a response without model_started', async () => {
    const log = await completedLog();
    const types = log.map((e) => e.type);
    const started = types.indexOf('tool_started');
    // Drop tool_started and renumber: the result now comes before any start.
    const broken = [...log.slice(0, started), ...log.slice(started + 1)].map((e, i) => ({ ...e, seq: i + 1 }));
    expect(() => foldLog(broken)).toThrow(/before it started/);
    const noStart = [log[0], { ...log[2], seq: 2 }];
    expect(() => foldLog(noStart)).toThrow(/without model_started/);
  });

  it('requires the log to begin with run_started', async () => {
    const log = await completedLog();
    expect(() => foldLog([])).toThrow(/empty/);
    expect(() => foldLog([{ ...log[1], seq: 1 }])).toThrow(/must begin with run_started/);
  });
});
