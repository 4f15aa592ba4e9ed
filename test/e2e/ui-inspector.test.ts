// The web inspector in a real browser (Debian's chromium through playwright-core) on the local
// stack: the runs page lists runs and marks the one that waits for a person; a demo run whose
// escalate call was cut off by a killed worker shows its attention, and resolving it from the
// page ends the run completed, seen live; hostile model and tool output renders as text and runs
// nothing; another tenant's run is a 404; no console errors. Also `runs watch` on the same runs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogbookClient } from '../../dev/cli/api-client.js';
import type { Output } from '../../dev/cli/output.js';
import { WATCH_EXIT_CODES, followRun } from '../../dev/cli/watch-command.js';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { startRun } from '../../lib/engine/start-run.js';
import { eventually } from '../integration/runtime-helpers.js';
import { endpointsFor, uniquePrefix } from '../setup/emulator-context.js';
import { HOSTILE } from './ui-agents.fixture.js';
import { SKIP_BROWSER, launchChromium, screenshot, watchProblems } from './ui-browser.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');
const quiet = (): Output => ({ out: () => undefined, err: () => undefined, tty: false });

describe.skipIf(SKIP_BROWSER || !endpoints)('the inspector in a browser', () => {
  let stack: LocalStack;
  let client: LogbookClient;
  let browser: Browser;
  let workDir: string;
  const problems: string[] = [];
  const shots = join(tmpdir(), `logbook-ui-shots-${process.pid}`);

  /** A page whose console errors count against the test (the 404 the page itself asks for is expected). */
  async function open(path: string, width = 1280): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    watchProblems(page, problems, [/status of 404 .*\/runs\/ui-other/]);
    await page.goto(new URL(path, stack.apiUrl).href);
    return page;
  }

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'logbook-ui-'));
    stack = await startLocalStack({
      port: 0,
      endpoints,
      prefix: uniquePrefix('ui'),
      workDir,
      concurrency: 2,
      agentsModule: 'test/e2e/ui-agents.fixture.ts',
      // Slow tools: the test kills the worker while it is inside issue_refund.
      env: { SUPPORT_LEDGER_FILE: join(workDir, 'ledger.jsonl'), SUPPORT_TOOL_DELAY_MS: '1500' },
    });
    client = new LogbookClient(stack.apiUrl);
    browser = await launchChromium();

    // A demo run whose escalate call is interrupted: kill the worker inside issue_refund.
    await client.startRun({ agent: 'support', runId: 'ui-park', input: 'Customer c_77 writes: my order arrived damaged.' });
    await eventually('issue_refund to start', async () => {
      const events = await client.allEvents('ui-park');
      const refund = events.find((e) => e.type === 'model_response' && (e.calls as { name: string }[]).some((c) => c.name === 'issue_refund'));
      return refund && events.some((e) => e.type === 'tool_started' && String(e.callId).startsWith(`${String(refund.seq)}-`)) ? true : undefined;
    });
    expect(stack.runner.killBusyWorker()).toBe(true);
    await client.startRun({ agent: 'support', runId: 'ui-done', input: 'Customer c_12 writes: damaged order.' });
    await client.startRun({ agent: 'hostile', runId: 'ui-xss', input: `read ${HOSTILE.img}` });
    await startRun(stack.runtime.engine, { tenant: 'globex', runId: 'ui-other', agent: 'support', input: 'globex private data' });
    await eventually('ui-park to park', async () => ((await client.getRun('ui-park')).status === 'parked' ? true : undefined));
    await eventually('ui-done and ui-xss to complete', async () => {
      const views = await Promise.all(['ui-done', 'ui-xss'].map((id) => client.getRun(id)));
      return views.every((v) => v.status === 'completed') ? true : undefined;
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('lists the runs, marks the one that waits for a person, filters, finds by id, fits a narrow window', async () => {
    const page = await open('/ui/');
    const rows = page.locator('table.runs tbody tr');
    await expect.poll(() => rows.count()).toBe(3);
    // Newest first; the other tenant's run is not there.
    expect(await page.locator('table.runs tbody tr td:first-child').allTextContents()).toEqual(['ui-xss', 'ui-done', 'ui-park']);
    const parked = page.locator('tr.needs-person');
    expect(await parked.locator('td').first().textContent()).toBe('ui-park');
    expect(await parked.textContent()).toContain('needs a person');
    await expect.poll(() => page.locator('.banner').textContent()).toContain('1 run waits for a person');
    await expect.poll(() => page.getByRole('button', { name: /^parked \(1\)$/ }).count()).toBe(1);
    await screenshot(page, shots, 'inspector-runs.png');

    await page.getByRole('button', { name: /^parked/ }).click();
    await expect.poll(() => page.locator('table.runs tbody tr td:first-child').allTextContents()).toEqual(['ui-park']);
    expect(page.url()).toContain('status=parked');

    // A run id that cannot exist: an inline error and no request.
    const sent: string[] = [];
    page.on('request', (r) => sent.push(r.url()));
    await page.getByLabel('Run id').fill('no such id!');
    await page.getByRole('button', { name: 'Open' }).click();
    expect(await page.locator('#run-search-error').textContent()).toContain('letters, digits');
    expect(await page.getByLabel('Run id').getAttribute('aria-invalid')).toBe('true');
    expect(sent.filter((u) => u.includes('/runs/no'))).toEqual([]);

    await page.setViewportSize({ width: 400, height: 800 });
    // No sideways scroll of the page itself: wide tables scroll inside their own region.
    expect(await page.locator('html').evaluate((html) => html.scrollWidth <= html.clientWidth)).toBe(true);
    await page.close();
  });

  it("answers another tenant's run with a 404, as the API does", async () => {
    const page = await open('/ui/runs/ui-other');
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('No run ui-other for this tenant.');
    expect(await page.content()).not.toContain('globex private data');
    await page.close();
  });

  it('shows the parked run’s attention; resolving it from the page ends the run completed, seen live', async () => {
    expect(await followRun(client, 'ui-park', quiet())).toBe(WATCH_EXIT_CODES.parked);
    const opened = Date.now();
    const page = await open('/ui/runs/ui-park');
    let navigations = 0;
    page.on('framenavigated', (frame) => (frame === page.mainFrame() ? navigations++ : undefined));
    const card = page.locator('.attention article');
    await card.waitFor();
    const title = (await card.locator('h3').textContent()) ?? '';
    expect(title).toMatch(/^issue_refund \(\d+-0\): unknown outcome$/);
    const callId = /\((\d+-0)\)/.exec(title)?.[1] ?? '';
    expect(await page.locator('#pending-title + ul').textContent()).toContain('Policy escalate');
    await expect.poll(() => page.locator('#budgets-title + dl meter').count()).toBe(5);
    await screenshot(page, shots, 'inspector-run.png');

    // Invalid JSON: an inline error, nothing sent.
    const posts: string[] = [];
    page.on('request', (r) => (r.method() === 'POST' ? posts.push(r.url()) : undefined));
    const field = page.getByLabel(/Result \(JSON\)/);
    await field.fill('{refundId: r_1');
    await page.getByRole('button', { name: 'Mark succeeded…' }).click();
    expect(await card.getByRole('alert').textContent()).toContain('must be JSON');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(posts).toEqual([]);

    // With the keyboard: the result, the action, what it will do, then send.
    await field.fill('{"refundId": "rf_checked_by_hand"}');
    await field.press('Tab');
    await page.keyboard.press('Enter');
    expect(await card.locator('.confirm:not([hidden])').textContent()).toContain(`Records issue_refund (${callId}) as succeeded with the result shown below`);
    expect(posts).toEqual([]);
    const sentAt = Date.now();
    await page.keyboard.press('Enter');
    await page.locator('dl.facts .status-completed').waitFor({ timeout: 60_000 });
    const resolvedMs = Date.now() - opened;
    const liveMs = Date.now() - sentAt;
    await expect.poll(() => page.locator('ul.action-log').textContent()).toMatch(/recorded by the worker at seq \d+ \(attention_resolved succeeded/);
    await expect.poll(() => page.locator('.live').textContent()).toMatch(/^Finished: completed/);
    expect(posts).toHaveLength(1);
    expect(navigations).toBe(0);
    console.info(`inspector: opened the parked run and saw it completed ${resolvedMs} ms later, ${liveMs} ms after Send (typing and clicks included)`);

    const events = await client.allEvents('ui-park');
    expect(events.find((e) => e.type === 'attention_resolved')).toMatchObject({ callId, outcome: 'succeeded', result: { kind: 'inline', value: { refundId: 'rf_checked_by_hand' } } });
    expect(events.filter((e) => e.type === 'tool_started' && e.callId === callId)).toHaveLength(1);
    expect(await followRun(client, 'ui-park', quiet())).toBe(WATCH_EXIT_CODES.completed);
    await page.close();
  });

  it('renders hostile model and tool output as text, fetches the S3 payload with its sha256 checked, and runs none of it', async () => {
    const page = await open('/ui/runs/ui-xss');
    await expect.poll(() => page.locator('.live').textContent()).toMatch(/^Finished: completed/);
    await page.getByRole('tab', { name: 'Events' }).click();
    for (const details of await page.locator('details').all()) await details.evaluate((el) => el.setAttribute('open', ''));
    await page.getByRole('button', { name: 'Fetch it and check its sha256' }).click();
    await expect.poll(() => page.locator('.blob-status').textContent()).toMatch(/^sha256 verified \(\d+\.\d KB\)\.$/);
    const text = await page.locator('main').textContent();
    // Shown as text: as it is in the model's text, JSON-escaped inside tool output and arguments.
    for (const markup of Object.values(HOSTILE)) expect(text?.includes(markup) || text?.includes(JSON.stringify(markup).slice(1, -1)), markup).toBe(true);
    expect(text).toContain(HOSTILE.img);
    expect(await page.evaluate(() => (globalThis as { __xss?: unknown }).__xss)).toBeUndefined();
    expect(await page.locator('main img, main script, main iframe, main [onerror], main [onload], main a[href^="javascript"]').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(1);
    await page.close();
  });

  it('had no console errors, uncaught exceptions or CSP violations on any page', () => {
    expect(problems).toEqual([]);
  });
});
