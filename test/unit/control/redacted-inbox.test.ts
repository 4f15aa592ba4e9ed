// Inbox items are stored redacted (issue 33): a signal, a decision or a message waiting for the
// run's next step holds what the log will, never the secret as sent. What that must not break: a
// payload that fits its schema only as sent (a one-time code under `otp`) is still delivered, a
// client's retry of the same request is still the same request, and a payload that really does
// not fit is still refused at ingest.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FIELD_PLACEHOLDER } from '../../../lib/core/redaction.js';
import { requestApproval, requestSignal } from '../../../lib/engine/control-requests.js';
import { ingestContext } from '../../../lib/engine/ingest-context.js';
import { startRun } from '../../../lib/engine/start-run.js';
import { defineTool } from '../../../lib/authoring/define-tool.js';
import { waitForSignal } from '../../../lib/authoring/waits.js';
import { scriptedWorld } from '../../../lib/testing/scripted-world.js';
import { logOf } from '../engine/helpers.js';
import { drain } from './helpers.js';

const CODE = z.object({ otp: z.string().regex(/^\d{6}$/), reference: z.string() });
const TOKEN = 'ghp_16C7e42F292c6912E7710c838347Ae178B4a';

function world() {
  const verify = waitForSignal({ name: 'wait_code', description: 'Wait for the code.', signal: 'code', payload: CODE, timeoutSeconds: 3600 });
  const charge = defineTool({
    name: 'charge',
    version: '1',
    description: 'Charge.',
    input: z.object({ note: z.string() }),
    policy: 'escalate',
    approval: 'always',
    async execute(args) {
      return { charged: args.note };
    },
  });
  return scriptedWorld({
    tools: [verify, charge],
    script: [
      {
        text: 'Waiting.',
        calls: [
          { name: 'wait_code', args: {} },
          { name: 'charge', args: { note: 'x' } },
        ],
      },
      { text: 'done' },
    ],
  });
}

describe('inbox items are stored redacted', () => {
  it('a one-time code that fits its schema only as sent is delivered (redacted), and the item waits redacted', async () => {
    const t = world();
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    await drain(t.world, t.worker);
    await requestSignal(t.worker.deps, t.run, { signal: 'code', payload: { otp: '493017', reference: `ref ${TOKEN}` } }, 'bank');
    const waiting = await t.storage.inbox.list(t.run);
    expect(JSON.stringify(waiting)).not.toContain('493017');
    expect(JSON.stringify(waiting)).not.toContain(TOKEN);
    await drain(t.world, t.worker);
    const { events } = await logOf(t.world, t.run);
    const result = events.find((e) => e.type === 'tool_result' && e.source === 'signal');
    expect(result).toMatchObject({ ok: true, output: { kind: 'inline', value: { otp: FIELD_PLACEHOLDER, reference: 'ref [REDACTED:github_token]' } } });
  });

  it("a client's retry of the same decision with a secret in its comment is the same request; another one is a conflict", async () => {
    const t = world();
    await startRun(t.worker.deps, { ...t.run, agent: 'agent', input: 'go' });
    await drain(t.world, t.worker);
    const decision = { callId: '3-1', decision: 'reject' as const, comment: `no, key ${TOKEN}` };
    expect(await requestApproval(t.worker.deps, t.run, decision, 'alice')).toEqual({ inboxId: 'approval-3-1' });
    expect(await requestApproval(t.worker.deps, t.run, decision, 'alice')).toEqual({ inboxId: 'approval-3-1' });
    await expect(requestApproval(t.worker.deps, t.run, { ...decision, comment: 'something else' }, 'alice')).rejects.toThrow(/already has a decision/);
    expect(JSON.stringify(await t.storage.inbox.list(t.run))).not.toContain(TOKEN);
  });

  it('at ingest, only what the redactor changed is let through: a payload that does not fit otherwise is still refused', () => {
    const t = world();
    const deps = t.worker.deps;
    const ctx = ingestContext(deps, 'agent');
    const pinned = deps.registry.agent('agent')!.pinnedTools.find((p) => p.name === 'wait_code')!;
    expect(ctx.checkPayload(pinned, { otp: FIELD_PLACEHOLDER, reference: 'r' })).toBeUndefined();
    expect(ctx.checkPayload(pinned, { otp: 'abc', reference: 'r' })).toMatch(/otp/);
    expect(ctx.checkPayload(pinned, { otp: FIELD_PLACEHOLDER })).toMatch(/reference/);
  });
});
