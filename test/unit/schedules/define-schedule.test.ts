import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent } from '../../../lib/authoring/define-agent.js';
import { defineAgents } from '../../../lib/authoring/define-agents.js';
import { defineWorkflow } from '../../../lib/authoring/define-workflow.js';

const input = z.object({ region: z.string() });
const workflow = (schedule: unknown, version = '1') =>
  defineWorkflow({ name: 'nightly', version, input, schedule: schedule as never, run: async (_ctx, i) => ({ region: i.region }) });

describe('schedule at define time', () => {
  it('pins the checked schedule with its defaults (UTC, skip, tenant default)', () => {
    const w = workflow({ cron: 'cron(0 2 * * ? *)', input: { region: 'eu' } });
    expect(w.pinnedSchedule).toMatchObject({ cron: 'cron(0 2 * * ? *)', timezone: 'UTC', overlap: 'skip', tenant: 'default', input: { region: 'eu' } });
    const q = workflow({ cron: 'cron(0 2 * * ? *)', timezone: 'Europe/Paris', overlap: 'queue', tenant: 'acme', input: { region: 'eu' } });
    expect(q.pinnedSchedule).toMatchObject({ timezone: 'Europe/Paris', overlap: 'queue', tenant: 'acme' });
  });
  it.each([
    [{ cron: '0 2 * * *', input: { region: 'eu' } }, /workflow nightly: schedule: cron "0 2 \* \* \*": must be cron\(minutes hours/],
    [{ cron: 'cron(0 2 * * ? *)', timezone: 'Europe/Pariss', input: { region: 'eu' } }, /timezone "Europe\/Pariss" is not an IANA time zone/],
    [{ cron: 'cron(0 2 * * ? *)', input: { region: 3 } }, /schedule: input does not fit the input schema of nightly@1: schedule\.input\.region/],
    [{ cron: 'cron(0 2 * * ? *)', input: { region: 'eu', extra: 1 } }, /schedule\.input\.extra: unknown field/],
    [{ cron: 'cron(0 2 * * ? *)', input: { region: 'eu' }, overlap: 'parallel' }, /workflow nightly: schedule: .*overlap/],
    [{ cron: 'cron(0 2 * * ? *)', input: { region: 'eu' }, every: 5 }, /workflow nightly: schedule: .*every/],
  ])('refuses %j with a ConfigError that says why', (schedule, message) => {
    expect(() => workflow(schedule)).toThrow(message);
    try {
      workflow(schedule);
    } catch (error) {
      expect((error as { code?: string }).code).toBe('config_error');
    }
  });
  it('an agent takes a schedule too, checked against its input schema', () => {
    const spec = { name: 'digest', version: '1', model: { id: 'scripted:x', maxOutputTokens: 10 }, system: { version: 'v', text: 't' }, tools: [] };
    expect(defineAgent({ ...spec, schedule: { cron: 'cron(0 8 ? * MON *)', input: 'send the digest' } }).pinnedSchedule?.overlap).toBe('skip');
    expect(() => defineAgent({ ...spec, input, schedule: { cron: 'cron(0 8 ? * MON *)', input: 'text' } })).toThrow(
      /agent digest: schedule: input does not fit/,
    );
  });
  it('the registry deploys the schedule of the latest version of each name', () => {
    const agents = defineAgents({
      agents: [],
      workflows: [
        workflow({ cron: 'cron(0 1 * * ? *)', input: { region: 'eu' } }, '1'),
        workflow({ cron: 'cron(0 3 * * ? *)', input: { region: 'us' } }, '2'),
        defineWorkflow({ name: 'unscheduled', version: '1', run: async () => 'x' }),
      ],
    });
    const list = agents.registry.schedules();
    expect(list.map((s) => [s.name, s.version, s.kind, s.schedule.cron])).toEqual([['nightly', '2', 'workflow', 'cron(0 3 * * ? *)']]);
    expect(agents.registry.schedule('unscheduled')).toBeUndefined();
  });
});
