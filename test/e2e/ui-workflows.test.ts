// A durable workflow run (defineWorkflow) in the inspector, in a real browser on the local stack:
// the runs list names the workflow; the run page lists its operations (a step's result that is
// markup stays text and runs nothing; the child agent run is a link to its page) and draws them on
// the waterfall (the child's bar links to it); the signal the run waits for is sent from its form
// (JSON payload) and the approval op-<n> approved from its card, each checked in the log; the run
// completes, seen live. One stack, one run (and its child).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogbookClient } from '../../dev/cli/api-client.js';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { eventually } from '../integration/runtime-helpers.js';
import { endpointsFor, uniquePrefix } from '../setup/emulator-context.js';
import { HOSTILE_NOTE } from './ui-workflows.fixture.js';
import { SKIP_BROWSER, launchChromium, watchProblems } from './ui-browser.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');
const RUN = 'wf-ui-1';
const CHILD = `${RUN}-cop-2`;
const ESCALATED = 'wf-ui-esc';

describe.skipIf(SKIP_BROWSER || !endpoints)('a workflow run in the inspector', () => {
  let stack: LocalStack;
  let client: LogbookClient;
  let browser: Browser;
  let workDir: string;
  const problems: string[] = [];

  const statusIs = (runId: string, status: string) =>
    eventually(`${runId} to be ${status}`, async () => ((await client.getRun(runId)).status === status ? true : undefined), 60_000);

  async function open(path: string): Promise<{ page: Page; posts: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watchProblems(page, problems);
    const posts: string[] = [];
    page.on('request', (r) => (r.method() === 'POST' ? posts.push(new URL(r.url()).pathname) : undefined));
    await page.goto(new URL(path, stack.apiUrl).href);
    return { page, posts };
  }

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'logbook-ui-workflows-'));
    stack = await startLocalStack({
      port: 0,
      endpoints,
      prefix: uniquePrefix('uiw'),
      workDir,
      concurrency: 2,
      agentsModule: 'test/e2e/ui-workflows.fixture.ts',
      env: { CHARGE_DELAY_MS: '1500' },
    });
    client = new LogbookClient(stack.apiUrl);
    browser = await launchChromium();
    const start = async (workflow: string, runId: string) => {
      const started = await fetch(new URL('/runs', stack.apiUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow, runId, input: { order: 'o-7' } }),
      });
      expect(started.status).toBe(201);
    };
    await start('ship', RUN);
    await statusIs(RUN, 'waiting');
    await eventually('the signal wait', async () => ((await client.getRun(RUN)).waiting?.some((w) => w.kind === 'signal') ? true : undefined), 60_000);
    // The escalate step cut off by a killed worker: a person resolves op-1.
    await start('charge', ESCALATED);
    await eventually('the charge step to start', async () => ((await client.allEvents(ESCALATED)).some((e) => e.type === 'op_started') ? true : undefined));
    expect(stack.runner.killBusyWorker()).toBe(true);
    await statusIs(ESCALATED, 'parked');
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('lists the workflow run by its workflow and shows its operations, the markup as text, the child as a link', async () => {
    const { page } = await open('/ui/');
    const row = (runId: string) => page.locator('table.runs tbody tr').filter({ has: page.getByRole('link', { name: runId, exact: true }) });
    await row(RUN).waitFor();
    expect(await row(RUN).locator('td.definition').textContent()).toBe('workflow ship@3');
    expect(await row(CHILD).locator('td.definition').textContent()).toBe('helper@1.0.0');

    await page.goto(new URL(`/ui/runs/${RUN}`, stack.apiUrl).href);
    expect(await page.locator('dl.facts').textContent()).toContain('Workflowship@3');
    const ops = page.locator('table.operations tbody tr');
    await expect.poll(() => ops.count()).toBe(3);
    expect(await ops.locator('td:first-child').allTextContents()).toEqual(['op-1', 'op-2', 'op-3']);
    const lookup = page.locator('#op-row-1');
    expect(await lookup.locator('td').nth(3).textContent()).toBe('succeeded');
    // The step's result holds markup: shown as its text, no element made from it, nothing ran.
    expect(await lookup.locator('td.outcome').textContent()).toContain(HOSTILE_NOTE.replace(/"/g, '\\"'));
    expect(await page.locator('table.operations img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __xss?: unknown }).__xss)).toBeUndefined();
    const child = page.locator('#op-row-2 a.child-run');
    expect(await child.textContent()).toBe(CHILD);
    expect(await child.getAttribute('href')).toBe(`/ui/runs/${CHILD}`);
    expect(await page.locator('#op-row-3').textContent()).toContain('waits for signal shipped');
    // A workflow run takes signals, not follow-up messages: no message form; it forks.
    expect(await page.locator('#message-input').count()).toBe(0);
    expect(await page.locator('#fork-title').count()).toBe(1); // a workflow run forks where no operation is in flight

    // The waterfall draws the operations; the child's bar links to the child run.
    await page.getByRole('tab', { name: 'Waterfall' }).click();
    await expect.poll(() => page.locator('svg .wf-bar.child').count()).toBe(1);
    expect(await page.locator('svg a.wf-child-link').getAttribute('href')).toBe(`/ui/runs/${CHILD}`);
    expect(await page.locator('svg .wf-bar.wait').count()).toBe(1);
    expect(await page.locator('svg .wf-bar.op').count()).toBe(1);
    await page.locator('svg a.wf-child-link').click();
    await page.waitForURL(`**/ui/runs/${CHILD}`);
    await expect.poll(() => page.locator('dl.facts').textContent()).toContain(`Parent${RUN} (op-2)`);
    await page.close();
  });

  it('sends the signal from its JSON form, approves op-4 from its card, and the run completes', async () => {
    const { page, posts } = await open(`/ui/runs/${RUN}`);
    const card = page.locator('.actions article', { hasText: 'waits for signal shipped' });
    await card.waitFor();
    await card.getByLabel('tracking').fill('TRK-42');
    await card.getByRole('button', { name: 'Send shipped…' }).click();
    await card.getByRole('button', { name: 'Send: Send shipped' }).click();

    const approval = page.locator('.actions article', { hasText: 'refund (op-4) awaits approval' });
    await approval.waitFor({ timeout: 60_000 });
    expect(await approval.locator('pre.args').textContent()).toBe(JSON.stringify({ amount: 5 }, null, 2));
    await approval.getByRole('button', { name: 'Approve…', exact: true }).click();
    await approval.getByRole('button', { name: 'Send: Approve', exact: true }).click();
    await page.locator('dl.facts .status-completed').waitFor({ timeout: 60_000 });
    await expect.poll(() => page.locator('table.operations tbody tr').count()).toBe(4);
    expect(posts.filter((p) => p.endsWith('/signals'))).toHaveLength(1);
    expect(posts.filter((p) => p.endsWith('/approvals') || p.endsWith('/approve'))).toHaveLength(1);

    const events = await client.allEvents(RUN);
    expect(events.find((e) => e.type === 'op_result' && e.op === 3)).toMatchObject({
      source: 'signal',
      output: { kind: 'inline', value: { tracking: 'TRK-42' } },
    });
    expect(events.find((e) => e.type === 'op_result' && e.op === 4)).toMatchObject({ ok: true, source: 'human' });
    expect(events.find((e) => e.type === 'run_completed')).toBeDefined();
    expect(problems).toEqual([]);
    await page.close();
  });

  it('resolves an escalate step cut off by a crash (op-1) as succeeded with a result, and the run completes', async () => {
    const { page, posts } = await open(`/ui/runs/${ESCALATED}`);
    const card = page.locator('.attention article');
    await card.waitFor();
    expect(await card.locator('h3').textContent()).toBe('step charge (op-1): unknown outcome');
    await page.getByLabel(/Result \(JSON\)/).fill('{"charged": "by hand"}');
    await card.getByRole('button', { name: 'Mark succeeded…' }).click();
    expect(await card.locator('.confirm:not([hidden])').textContent()).toContain(
      "Records step charge (op-1) as succeeded with the result shown below. The step is not run again; the workflow's code gets this result",
    );
    await card
      .locator('.confirm:not([hidden])')
      .getByRole('button', { name: /^Send: / })
      .click();
    await page.locator('dl.facts .status-completed').waitFor({ timeout: 60_000 });
    expect(posts.filter((p) => p.endsWith('/resolve'))).toHaveLength(1);
    const events = await client.allEvents(ESCALATED);
    // The person's outcome is the step's result (the fold settles op-1 from it); the run completes with it.
    expect(events.find((e) => e.type === 'attention_resolved')).toMatchObject({
      callId: 'op-1',
      outcome: 'succeeded',
      result: { kind: 'inline', value: { charged: 'by hand' } },
    });
    expect(events.some((e) => e.type === 'op_started' && e.attempt === 2)).toBe(false);
    expect((await client.getRun(ESCALATED)).output).toEqual({ receipt: { charged: 'by hand' } });
    expect(problems).toEqual([]);
    await page.close();
  });
});
