// A run's attachments in the inspector, in a real browser on the local stack: listed as links (text),
// fetched through the API on a click, sha256-checked and saved as a download; an uploaded HTML
// page is never rendered, so the markup in it runs nowhere.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogbookClient } from '../../dev/cli/api-client.js';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { eventually } from '../integration/runtime-helpers.js';
import { endpointsFor, uniquePrefix } from '../setup/emulator-context.js';
import { pngBytes } from '../unit/attachments/fixtures.js';
import { HOSTILE } from './ui-agents.fixture.js';
import { SKIP_BROWSER, launchChromium, watchProblems } from './ui-browser.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');

describe.skipIf(SKIP_BROWSER || !endpoints)('attachments in the inspector', () => {
  let stack: LocalStack;
  let browser: Browser;
  let workDir: string;
  const problems: string[] = [];
  const page = new TextEncoder().encode(`<html><body>${HOSTILE.img}${HOSTILE.script}</body></html>`);
  const png = pngBytes(500, 2);

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'logbook-ui-attach-'));
    stack = await startLocalStack({ port: 0, endpoints: endpoints!, prefix: uniquePrefix('uiatt'), workDir, concurrency: 1, agentsModule: 'test/e2e/ui-agents.fixture.ts' });
    browser = await launchChromium();
    const client = new LogbookClient(stack.apiUrl);
    const html = (await client.upload(page, 'text/html', 'page.html')).ref;
    const image = (await client.upload(png, 'image/png', 'mug.png')).ref;
    await client.startRun({ agent: 'hostile', runId: 'ui-attach', input: { text: 'read these', attachments: [html, image] } });
    await eventually('ui-attach to finish', async () => ((await client.getRun('ui-attach')).status === 'running' ? undefined : true));
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('lists them as links; a click saves the checked bytes and renders nothing', async () => {
    const tab = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    watchProblems(tab, problems);
    await tab.goto(new URL('/ui/runs/ui-attach', stack.apiUrl).href);
    await expect.poll(() => tab.locator('.attachments').count()).toBeGreaterThan(0);
    for (const details of await tab.locator('details').all()) await details.evaluate((el) => el.setAttribute('open', ''));
    const list = tab.locator('.attachments').first();
    expect(await list.textContent()).toMatch(/page\.html text\/html, .*mug\.png image\/png, 500 B/);

    const [download] = await Promise.all([tab.waitForEvent('download'), list.getByRole('link', { name: 'page.html' }).click()]);
    expect(download.suggestedFilename()).toBe('page.html');
    expect(readFileSync((await download.path())!)).toEqual(Buffer.from(page));
    await expect.poll(() => list.locator('.blob-status').first().textContent()).toMatch(/sha256 verified \(\d+ B\), saved\./);

    const [image] = await Promise.all([tab.waitForEvent('download'), list.getByRole('link', { name: 'mug.png' }).click()]);
    expect(readFileSync((await image.path())!)).toEqual(Buffer.from(png));

    expect(await tab.evaluate(() => (globalThis as { __xss?: unknown }).__xss)).toBeUndefined();
    expect(await tab.locator('main img, main iframe, main object, main embed').count()).toBe(0);
    expect(problems).toEqual([]);
    await tab.close();
  }, 60_000);
});
