// The AI SDK chat UI on a Logbook run in a real browser (Debian's chromium through
// playwright-core): a minimal React page (test/e2e/chat-page, bundled here by esbuild) with
// @ai-sdk/react's useChat and logbook/chat, on the local stack with a streaming agent. The answer
// is seen growing, the refund waits for the Approve button, the rest of the answer follows, a
// follow-up is answered; a page reloaded while that answer streams shows it again whole (useChat
// `resume: true`, the transport's cursor in localStorage). Every text shown is the log's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { endpointsFor } from '../setup/emulator-context.js';
import { FIRST_TEXT, FOLLOW_UP_TEXT, SECOND_TEXT, THIRD_TEXT } from '../integration/chat-agents.fixture.js';
import { SKIP_BROWSER, launchChromium, watchProblems } from './ui-browser.js';

const endpoints = endpointsFor('dynalite') ?? endpointsFor('dynamodb-local');

/** The page's document, as far as the functions this test runs in it read it (this program has no DOM types). */
interface TextNode {
  textContent: string | null;
}
declare const document: { querySelector(s: string): (TextNode & object) | null; querySelectorAll(s: string): ArrayLike<TextNode> & Iterable<TextNode> };

describe.skipIf(SKIP_BROWSER || !endpoints)('the chat UI in a browser', () => {
  let stack: LocalStack;
  let browser: Browser;
  let workDir: string;
  let bundle: string;
  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'logbook-chat-ui-'));
    const built = await build({
      entryPoints: [resolve('test/e2e/chat-page/page.tsx')],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      jsx: 'automatic',
      conditions: ['logbook-source'],
      define: { 'process.env.NODE_ENV': '"production"' },
      logLevel: 'silent',
    });
    bundle = built.outputFiles[0]!.text;
    stack = await startLocalStack({
      agentsModule: resolve('test/integration/chat-agents.fixture.ts'),
      port: 0,
      endpoints: endpoints!,
      prefix: `chat-ui-${Date.now()}`,
      workDir,
      concurrency: 1,
      env: { LOGBOOK_SCRIPTED_PACE_MS: '120' },
    });
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('streams the answer, waits for the approval, answers a follow-up, and shows a streaming answer again after a reload', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    watchProblems(page, problems);
    // The page is served from the API's origin (no CORS needed): only its two files are stubbed.
    await page.route('**/chat-ui/**', (route) =>
      route.request().url().endsWith('/app.js')
        ? route.fulfill({ contentType: 'text/javascript', body: bundle })
        : route.fulfill({
            contentType: 'text/html',
            body: '<!doctype html><meta charset="utf-8"><div id="root"></div><script type="module" src="/chat-ui/app.js"></script>',
          }),
    );
    const chatId = `ui-${Date.now()}`;
    await page.goto(`${stack.apiUrl}/chat-ui/index.html?chat=${chatId}`);
    // Every length the first answer's text had on the page, as it grew.
    await page.evaluate(() => {
      const w = globalThis as unknown as { __lengths: number[]; MutationObserver: new (f: () => void) => { observe(n: unknown, o: object): void } };
      w.__lengths = [];
      new w.MutationObserver(() => w.__lengths.push(document.querySelector('section.assistant p.text')?.textContent?.length ?? 0)).observe(
        document.querySelector('main'),
        { subtree: true, childList: true, characterData: true },
      );
    });
    await page.fill('#say', 'Order 1001 arrived broken.');
    await page.click('#send');
    const approve = page.locator('button.approve');
    await approve.waitFor({ timeout: 60_000 });
    expect(await approve.textContent()).toBe('Approve refund {"orderId":"1001","amountEur":42}');
    expect(await page.locator('section.assistant p.text').allTextContents()).toEqual([FIRST_TEXT, SECOND_TEXT]);
    // Growing: parts of the first answer were on the page before all of it.
    const lengths = await page.evaluate(() => (globalThis as unknown as { __lengths: number[] }).__lengths);
    expect(lengths.filter((n) => n > 0 && n < FIRST_TEXT.length).length).toBeGreaterThan(1);
    expect(await page.locator('section.assistant .tool').evaluateAll((els) => els.map((e) => `${e.textContent}:${e.getAttribute('data-state')}`))).toEqual([
      'lookup_order:output-available',
      'refund:approval-requested',
    ]);

    await approve.click();
    await page.waitForFunction((t) => [...document.querySelectorAll('p.text')].some((p) => p.textContent === t), THIRD_TEXT, { timeout: 60_000 });
    expect(await page.locator('button.approve').count()).toBe(0);
    expect(await page.locator('section.assistant .tool').evaluateAll((els) => els.map((e) => e.getAttribute('data-state')))).toEqual([
      'output-available',
      'output-available',
    ]);

    await page.fill('#say', 'Thanks!');
    await page.click('#send');
    // Reload while the follow-up's answer streams: the page comes back to it from the log.
    await page.waitForFunction(
      () => document.querySelectorAll('section.assistant').length === 2 && (document.querySelectorAll('section.assistant')[1]?.textContent ?? '').length > 0,
    );
    expect(await page.locator('section.assistant').nth(1).textContent()).not.toBe(FOLLOW_UP_TEXT);
    await page.reload();
    await page.waitForFunction((t) => document.querySelector('section.assistant p.text')?.textContent === t, FOLLOW_UP_TEXT, { timeout: 60_000 });
    expect(await page.locator('section.assistant').getAttribute('data-id')).toMatch(new RegExp(`^${chatId}:\\d+$`));
    expect(await page.locator('section.assistant p.text').allTextContents()).toEqual([FOLLOW_UP_TEXT]);
    expect(problems).toEqual([]);
  }, 180_000);
});
