// Every action of the inspector's run page in a real browser (Debian's chromium through
// playwright-core) on the local stack, each checked in the run's log afterwards: approve, reject,
// edit (a schema error shown in the page and nothing sent, the API's 400 for what the page cannot
// check, then fixed), a signal sent from the form
// made from its payload schema, a follow-up message, a fork at a turn boundary (mid-call points
// disabled), fail and retry a run-level park, cancel. And the runs page: every run listed
// (including those awaiting approval), exact counts per status from GET /run-counts, the banner
// for runs that need a person. One stack, nine short runs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogbookClient } from '../../dev/cli/api-client.js';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { eventually } from '../integration/runtime-helpers.js';
import { endpointsFor, uniquePrefix } from '../setup/emulator-context.js';
import { SKIP_BROWSER, launchChromium, watchProblems } from './ui-browser.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');
type Event = Record<string, unknown>;

describe.skipIf(SKIP_BROWSER || !endpoints)('the inspector’s actions in a browser', () => {
  let stack: LocalStack;
  let client: LogbookClient;
  let browser: Browser;
  let workDir: string;
  let flag: string;
  const problems: string[] = [];

  const statusIs = (runId: string, status: string) =>
    eventually(`${runId} to be ${status}`, async () => ((await client.getRun(runId)).status === status ? true : undefined), 60_000);

  /** A run page whose console errors count against the test, and the POSTs it makes. */
  async function open(path: string): Promise<{ page: Page; posts: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watchProblems(page, problems, [/status of 400 .*\/approve/]);
    const posts: string[] = [];
    page.on('request', (r) => (r.method() === 'POST' ? posts.push(new URL(r.url()).pathname) : undefined));
    await page.goto(new URL(path, stack.apiUrl).href);
    return { page, posts };
  }

  const finished = (page: Page, status: string) => page.locator(`dl.facts .status-${status}`).waitFor({ timeout: 60_000 });
  const eventsOf = (runId: string): Promise<Event[]> => client.allEvents(runId);

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'logbook-ui-actions-'));
    flag = join(workDir, 'orphan-model-served');
    stack = await startLocalStack({
      port: 0,
      endpoints,
      prefix: uniquePrefix('uia'),
      workDir,
      concurrency: 2,
      agentsModule: 'test/e2e/ui-actions.fixture.ts',
      env: { ORPHAN_MODEL_FLAG: flag },
    });
    client = new LogbookClient(stack.apiUrl);
    browser = await launchChromium();
    const runs: [string, string][] = [
      ['act-approve', 'approver'],
      ['act-reject', 'approver'],
      ['act-edit', 'approver'],
      ['act-signal', 'waiter'],
      ['act-cancel', 'waiter'],
      ['act-chat', 'chatty'],
      ['act-retry', 'orphan'],
      ['act-fail', 'orphan'],
    ];
    for (const [runId, agent] of runs) await client.startRun({ agent, runId, input: `task for ${runId}` });
    for (const runId of ['act-approve', 'act-reject', 'act-edit']) await statusIs(runId, 'awaiting_approval');
    for (const runId of ['act-signal', 'act-cancel']) await statusIs(runId, 'waiting');
    for (const runId of ['act-retry', 'act-fail']) await statusIs(runId, 'parked');
    await statusIs('act-chat', 'completed');
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('lists every run, awaiting approval included, with exact counts per status and a banner for the five that need a person', async () => {
    const { page } = await open('/ui/');
    const ids = page.locator('table.runs tbody tr td:first-child');
    await expect.poll(() => ids.count()).toBe(8);
    await expect.poll(() => page.getByRole('button', { name: /^All \(/ }).textContent()).toBe('All (8)');
    const counts: Record<string, number> = { running: 0, waiting: 2, 'awaiting approval': 3, parked: 2, completed: 1, failed: 0, cancelled: 0 };
    for (const [label, n] of Object.entries(counts))
      expect(await page.getByRole('button', { name: new RegExp(`^${label} \\(`) }).textContent(), label).toBe(`${label} (${n})`);
    expect(await page.locator('.banner').textContent()).toBe('⚑ 5 runs wait for a person: 2 parked, 3 awaiting approval.');
    expect(await page.locator('tr.needs-person').count()).toBe(5);
    // The counts are the API's, exactly: the same numbers GET /run-counts gives.
    const api = (await (await fetch(new URL('/run-counts', stack.apiUrl))).json()) as { counts: Record<string, number>; total: number };
    expect(api).toEqual({ counts: { running: 0, waiting: 2, awaiting_approval: 3, parked: 2, completed: 1, failed: 0, cancelled: 0 }, total: 8 });

    await page.locator('.banner a', { hasText: 'awaiting approval' }).click();
    await expect.poll(async () => (await ids.allTextContents()).sort()).toEqual(['act-approve', 'act-edit', 'act-reject']);
    expect(await page.getByRole('button', { name: /^awaiting approval/ }).getAttribute('aria-pressed')).toBe('true');
    await page.close();
  });

  it('approves a call: its arguments shown, one decision sent on a double click, the run completes', async () => {
    const { page, posts } = await open('/ui/runs/act-approve');
    const card = page.locator('.actions article', { hasText: 'awaits approval' });
    await card.waitFor();
    expect(await card.locator('pre.args').textContent()).toBe(JSON.stringify({ orderId: 'o_1', amountCents: 1299 }, null, 2));
    await card.getByRole('button', { name: 'Approve…', exact: true }).click();
    expect(await card.locator('.confirm:not([hidden])').textContent()).toContain('Runs issue_refund');
    await card.getByRole('button', { name: 'Send: Approve', exact: true }).dblclick();
    await finished(page, 'completed');
    await expect.poll(() => page.locator('ul.action-log').textContent()).toMatch(/recorded by the worker at seq \d+ \(approval_decided/);
    expect(posts.filter((p) => p.endsWith('/approve'))).toHaveLength(1);
    const events = await eventsOf('act-approve');
    expect(events.filter((e) => e.type === 'approval_decided')).toMatchObject([{ decision: 'approve' }]);
    expect(events.find((e) => e.type === 'run_completed')?.answer).toMatchObject({ value: expect.stringContaining('rf-o_1-1299') });
    await page.close();
  });

  it('rejects a call with a comment the model sees', async () => {
    const { page } = await open('/ui/runs/act-reject');
    const card = page.locator('.actions article', { hasText: 'awaits approval' });
    await card.getByLabel(/^Comment/).fill('too much for a scratch');
    await card.getByRole('button', { name: 'Reject…' }).click();
    expect(await card.locator('.confirm:not([hidden])').textContent()).toContain('with your comment');
    await card.getByRole('button', { name: 'Send: Reject' }).click();
    await finished(page, 'completed');
    const events = await eventsOf('act-reject');
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({ decision: 'reject', comment: 'too much for a scratch' });
    expect(events.some((e) => e.type === 'tool_started')).toBe(false);
    await page.close();
  });

  it("edits a call: a schema error is shown in the page and nothing is sent, the API's 400 for what the page cannot check is shown; fixed, the edited call runs", async () => {
    const { page, posts } = await open('/ui/runs/act-edit');
    const card = page.locator('.actions article', { hasText: 'awaits approval' });
    await card.getByRole('button', { name: 'Edit and approve…' }).click();
    const args = card.getByLabel('Edited arguments (JSON)');
    await args.fill('{"orderId": "o_1", "amountCents": "ten dollars", "note": 1}');
    await card.getByRole('button', { name: 'Edit and approve…' }).click();
    const errors = card.locator('[id$="-args-errors"]');
    await expect.poll(() => errors.textContent()).toContain('amountCents: expected integer, got string');
    expect(await errors.textContent()).toContain('note: not a field of this schema');
    expect(await args.getAttribute('aria-invalid')).toBe('true');
    expect(posts).toEqual([]);
    const shots = join(tmpdir(), `logbook-ui-shots-${process.pid}`);
    await page.locator('.actions').screenshot({ path: join(shots, 'inspector-actions.png') });
    if (process.env.LOGBOOK_UPDATE_SCREENSHOTS === '1') await page.locator('.actions').screenshot({ path: join('docs', 'inspector-actions.png') });

    // Fits the pinned JSON Schema, refused by the tool's refinement: the API's 400 is shown, with its path.
    await args.fill('{"orderId": "o_1", "amountCents": 5000}');
    await card.getByRole('button', { name: 'Edit and approve…' }).click();
    await card.getByRole('button', { name: 'Send: Edit and approve' }).click();
    await expect.poll(() => card.locator('.confirm:not([hidden]) [role=alert]').textContent()).toContain('400 validation_error');
    expect(await card.locator('.confirm:not([hidden]) [role=alert]').textContent()).toContain('body.args.amountCents: at most the order total, 1299');
    expect(posts.filter((p) => p.endsWith('/approve'))).toHaveLength(1);
    await card.getByRole('button', { name: 'Back' }).click();

    await args.fill('{"orderId": "o_1", "amountCents": 1000}');
    await card.getByRole('button', { name: 'Edit and approve…' }).click();
    expect(await errors.textContent()).toBe('');
    expect(await card.locator('.confirm:not([hidden]) pre').textContent()).toBe(JSON.stringify({ orderId: 'o_1', amountCents: 1000 }, null, 2));
    await card.getByRole('button', { name: 'Send: Edit and approve' }).click();
    await finished(page, 'completed');
    expect(posts.filter((p) => p.endsWith('/approve'))).toHaveLength(2);
    const events = await eventsOf('act-edit');
    expect(events.find((e) => e.type === 'approval_decided')).toMatchObject({
      decision: 'edit',
      args: { kind: 'inline', value: { orderId: 'o_1', amountCents: 1000 } },
    });
    expect(events.find((e) => e.type === 'run_completed')?.answer).toMatchObject({ value: expect.stringContaining('rf-o_1-1000') });
    await page.close();
  });

  it('sends a signal from the form made from its payload schema (bad fields named first, nothing sent)', async () => {
    const { page, posts } = await open('/ui/runs/act-signal');
    const card = page.locator('.actions article', { hasText: 'waits for signal parcel_returned' });
    await card.waitFor();
    // A phone-sized window: the forms fit, no sideways scroll of the page itself.
    await page.setViewportSize({ width: 400, height: 800 });
    expect(await page.locator('html').evaluate((html) => html.scrollWidth <= html.clientWidth)).toBe(true);
    await card.getByLabel('trackingId').fill('T');
    await card.getByRole('button', { name: 'Send parcel_returned…' }).click();
    const errors = card.locator('.schema-form-box > .error');
    await expect.poll(() => errors.textContent()).toContain('trackingId: at least 3 characters');
    expect(await errors.textContent()).toContain('condition: required');
    expect(await card.getByLabel('trackingId').getAttribute('aria-invalid')).toBe('true');
    expect(posts).toEqual([]);

    await card.getByLabel('trackingId').fill('TRK-4711');
    await card.getByLabel('condition').selectOption({ label: 'damaged' });
    await card.getByLabel(/^weightKg/).fill('2.5');
    await card.getByLabel('insured').check();
    await card.getByRole('button', { name: 'Send parcel_returned…' }).click();
    await card.getByRole('button', { name: 'Send: Send parcel_returned' }).click();
    await finished(page, 'completed');
    const result = (await eventsOf('act-signal')).find((e) => e.type === 'tool_result');
    expect(result).toMatchObject({
      ok: true,
      output: { kind: 'inline', value: { trackingId: 'TRK-4711', condition: 'damaged', weightKg: 2.5, insured: true } },
    });
    await page.close();
  });

  it('sends a follow-up message once, even on a double click, and the run answers it', async () => {
    const { page, posts } = await open('/ui/runs/act-chat');
    await page.getByLabel('Message', { exact: true }).fill('one more thing');
    await page.getByRole('button', { name: 'Send message' }).dblclick();
    await expect.poll(async () => (await eventsOf('act-chat')).filter((e) => e.type === 'run_completed').length, { timeout: 60_000 }).toBe(2);
    expect(posts.filter((p) => p.endsWith('/messages')).length).toBeGreaterThanOrEqual(1);
    const events = await eventsOf('act-chat');
    // One message delivered, whatever the clicks: the page sends one id per message.
    expect(events.filter((e) => e.type === 'user_message')).toMatchObject([{ input: { kind: 'inline', value: 'one more thing' } }]);
    expect(events.filter((e) => e.type === 'run_completed').at(-1)?.answer).toMatchObject({ value: 'About "one more thing": noted.' });
    await page.close();
  });

  it('forks at a turn boundary chosen from the log (mid-call points disabled) and opens the fork', async () => {
    const { page } = await open('/ui/runs/act-chat');
    await finished(page, 'completed');
    await page.getByRole('button', { name: 'Show the turn boundaries' }).click();
    const select = page.getByLabel('Fork after');
    await select.waitFor();
    const events = await eventsOf('act-chat');
    const started = events.find((e) => e.type === 'tool_started');
    const result = events.find((e) => e.type === 'tool_result');
    const option = (seq: unknown) => select.locator(`option[value="${String(seq)}"]`);
    expect(await option(started?.seq).isDisabled()).toBe(true);
    expect(await option(started?.seq).textContent()).toContain('mid-call: call');
    expect(await option(result?.seq).isDisabled()).toBe(false);
    await select.selectOption(String(result?.seq));
    expect(await page.locator('#fork-why').textContent()).toContain("after the model's turn 1");
    await page.getByRole('button', { name: 'Fork…' }).click();
    await page.getByRole('button', { name: 'Send: Fork' }).click();
    await page.waitForURL(/\/ui\/runs\/fork-/, { timeout: 30_000 });
    const forkId = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1) ?? '');
    await finished(page, 'completed');
    expect((await client.getRun(forkId)).forkedFrom).toEqual({ runId: 'act-chat', seq: result?.seq });
    await page.close();
  });

  it('fails a parked run, and retries another once its model is served', async () => {
    const failing = await open('/ui/runs/act-fail');
    const park = failing.page.locator('.attention article', { hasText: 'Run parked: missing model' });
    await park.getByRole('button', { name: 'Fail the run…' }).click();
    await park.getByRole('button', { name: 'Send: Fail the run' }).click();
    await finished(failing.page, 'failed');
    expect((await eventsOf('act-fail')).find((e) => e.type === 'attention_resolved')).toMatchObject({ outcome: 'fail' });
    await failing.page.close();

    writeFileSync(flag, 'served');
    const retrying = await open('/ui/runs/act-retry');
    const card = retrying.page.locator('.attention article', { hasText: 'Run parked: missing model' });
    await card.getByRole('button', { name: 'Retry…' }).click();
    await card.getByRole('button', { name: 'Send: Retry' }).click();
    await finished(retrying.page, 'completed');
    const events = await eventsOf('act-retry');
    expect(events.find((e) => e.type === 'attention_resolved')).toMatchObject({ outcome: 'retry' });
    expect(events.find((e) => e.type === 'run_completed')?.answer).toMatchObject({ value: 'Back with a model: hello.' });
    await retrying.page.close();
  });

  it('cancels a waiting run with a reason', async () => {
    const { page } = await open('/ui/runs/act-cancel');
    await page.getByLabel('Reason (optional)').fill('customer withdrew');
    await page.getByRole('button', { name: 'Cancel the run…' }).click();
    await page.getByRole('button', { name: 'Send: Cancel the run' }).click();
    await finished(page, 'cancelled');
    expect((await eventsOf('act-cancel')).find((e) => e.type === 'cancel_requested')).toMatchObject({ reason: 'customer withdrew' });
    await page.close();
  });

  it('had no console errors, uncaught exceptions or CSP violations on any page', () => {
    expect(problems).toEqual([]);
  });
});
