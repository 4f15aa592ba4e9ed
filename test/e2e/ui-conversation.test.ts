// The inspector's conversation view, waterfall and live stream in a real browser (Debian's chromium
// through playwright-core) on the local stack: a completed demo run reads as a transcript (input,
// the assistant's text, each tool call's arguments and result, as the log has them); an offloaded
// tool result loads when opened, sha256 checked; a child run's link opens the child; hostile model
// text, tool output and streamed text stay text; the waterfall has a bar per model call and tool
// attempt; and the live stream shows the answer growing before the run completes, drops an
// abandoned attempt, resumes after a lost connection with its cursor, and gives way to the logged
// answer. Approvals (edited arguments, by whom), signals, parks, messages, a cancel, a failed model
// call and attachments (saved only when their bytes match the sha256) are drawn from a stubbed log,
// and a 604-event run is drawn in pages.
//
// The live part serves GET /runs/{id}/stream from a stub in this test (page.route), written to the
// wire contract: the stream route is built on another branch. Once it is merged, the stub's run can
// be a real one with a slow scripted model.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogbookClient } from '../../dev/cli/api-client.js';
import { startLocalStack, type LocalStack } from '../../dev/local/stack.js';
import { eventually } from '../integration/runtime-helpers.js';
import { endpointsFor, uniquePrefix } from '../setup/emulator-context.js';
import { BIG_PAGE_MARK, SLOW_TEXT } from './ui-conversation.fixture.js';
import { HOSTILE } from './ui-agents.fixture.js';
import { SKIP_BROWSER, launchChromium, watchProblems } from './ui-browser.js';

const endpoints = endpointsFor('dynamodb-local') ?? endpointsFor('dynalite');
type Ev = Record<string, unknown> & { seq: number; type: string };

/** How the conversation shows a JSON value: on one line up to 100 characters, else indented. */
const shown = (value: unknown) => (JSON.stringify(value).length <= 100 ? JSON.stringify(value) : JSON.stringify(value, null, 2));

/** Markup that must never become an element; each sets a global the test looks for. */
const STREAMED = '<img src=x onerror="window.__xss=9">';

/**
 * GET /runs/cv-live and /runs/cv-live/stream, answered from the test: the test releases items one
 * by one, a waiting long poll answers as soon as some arrive, and the next request can be made to
 * fail as a dropped connection does.
 */
class StreamStub {
  constructor(readonly runId = 'cv-live') {}
  readonly items: Record<string, unknown>[] = [];
  readonly requests: URLSearchParams[] = [];
  readonly aborted: URLSearchParams[] = [];
  status = 'running';
  done = false;
  failNext = false;
  private waiters: (() => void)[] = [];

  release(...items: Record<string, unknown>[]): void {
    for (const item of items) this.items.push({ ...item, cursor: `k${this.items.length + 1}` });
    for (const wake of this.waiters.splice(0)) wake();
  }

  finish(): void {
    this.done = true;
    this.status = 'completed';
    this.release();
  }

  async stream(route: Route): Promise<void> {
    const query = new URL(route.request().url()).searchParams;
    this.requests.push(query);
    if (this.failNext) {
      this.failNext = false;
      this.aborted.push(query);
      await route.abort('connectionreset');
      return;
    }
    const after = query.get('after');
    const from = () => (after ? this.items.findIndex((i) => i.cursor === after) + 1 : 0);
    if (from() >= this.items.length && Number(query.get('waitSeconds') ?? 0) > 0 && !this.done) {
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 1_000);
      });
    }
    const limit = Number(query.get('limit') ?? 500);
    const items = this.items.slice(from(), from() + limit);
    const done = this.done && from() + items.length >= this.items.length;
    await route.fulfill({ json: { items, next: (items.at(-1)?.cursor as string | undefined) ?? after ?? '', done } });
  }

  view(): Record<string, unknown> {
    const last = this.items.filter((i) => i.type === 'event').length;
    return {
      runId: this.runId,
      status: this.status,
      agent: { name: 'poet', version: '1.0.0' },
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:01.000Z',
      lastSeq: last,
      usage: { steps: 1, inputTokens: 0, outputTokens: 0, costUsd: 0 },
      attention: [],
      ...(this.status === 'completed' ? { result: 'Violets are blue.' } : {}),
    };
  }
}

/** One part of the page to the scratch directory; the docs' ones also to docs/ with LOGBOOK_UPDATE_SCREENSHOTS=1. */
async function shoot(part: Locator, dir: string, name: string, options: { docs?: boolean } = {}): Promise<void> {
  mkdirSync(dir, { recursive: true });
  await part.screenshot({ path: join(dir, name) });
  if (options.docs && process.env.LOGBOOK_UPDATE_SCREENSHOTS === '1') copyFileSync(join(dir, name), join('docs', name));
}

describe.skipIf(SKIP_BROWSER || !endpoints)('the conversation view, waterfall and live stream in a browser', () => {
  let stack: LocalStack;
  let client: LogbookClient;
  let browser: Browser;
  let workDir: string;
  const problems: string[] = [];
  const shots = join(tmpdir(), `logbook-ui-conversation-${process.pid}`);

  async function open(path: string, expected: RegExp[] = []): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watchProblems(page, problems, expected);
    await page.goto(new URL(path, stack.apiUrl).href);
    return page;
  }

  const finished = (page: Page) => expect.poll(() => page.locator('.live').textContent(), { timeout: 30_000 }).toMatch(/^Finished: completed/);

  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'logbook-ui-conv-'));
    stack = await startLocalStack({
      port: 0,
      endpoints,
      prefix: uniquePrefix('uiconv'),
      workDir,
      concurrency: 2,
      agentsModule: 'test/e2e/ui-conversation.fixture.ts',
    });
    client = new LogbookClient(stack.apiUrl);
    browser = await launchChromium();
    await client.startRun({ agent: 'support', runId: 'cv-demo', input: 'Customer c_12 writes: my order arrived damaged.' });
    await client.startRun({ agent: 'lead', runId: 'cv-lead', input: 'Read the long page and ask the helper.' });
    await client.startRun({ agent: 'hostile', runId: 'cv-xss', input: `read ${HOSTILE.img}` });
    await eventually('the three runs to complete', async () => {
      const views = await Promise.all(['cv-demo', 'cv-lead', 'cv-xss'].map((id) => client.getRun(id)));
      return views.every((v) => v.status === 'completed') ? true : undefined;
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('reads a completed demo run as a transcript: the input, each answer’s text, each call’s arguments and result', async () => {
    const events = (await client.allEvents('cv-demo')) as Ev[];
    const page = await open('/ui/runs/cv-demo');
    await finished(page);
    expect(await page.getByRole('tab', { name: 'Conversation' }).getAttribute('aria-selected')).toBe('true');
    const conv = page.locator('ol.conversation');
    expect(await conv.locator('.entry-input').textContent()).toContain('Customer c_12 writes: my order arrived damaged.');

    const responses = events.filter((e) => e.type === 'model_response');
    const turns = conv.locator('.entry-turn');
    expect(await turns.count()).toBe(responses.length);
    for (const [i, r] of responses.entries()) {
      const text = (r.text as { kind: string; value: unknown } | null)?.value;
      if (typeof text === 'string') expect(await turns.nth(i).locator('.say').textContent()).toBe(text);
    }
    const calls = responses.flatMap((r) => r.calls as { callId: string; name: string; args: { value: unknown } }[]);
    expect(calls.length).toBeGreaterThan(2);
    expect(await conv.locator('.entry-tool').count()).toBe(calls.length);
    for (const call of calls) {
      const entry = conv.locator(`#conv-call-${call.callId}`);
      expect(await entry.locator('h3 code').textContent()).toBe(call.name);
      expect(await entry.locator('.slot-args pre').textContent()).toBe(shown(call.args.value));
      const result = events.find((e) => e.type === 'tool_result' && e.callId === call.callId) as Ev;
      expect(await entry.locator('.slot-result pre').textContent()).toBe(shown((result.output as { value: unknown }).value));
      expect(await entry.locator('.badge').textContent()).toBe(result.ok ? 'ok' : `error ${String(result.errorCode ?? '')}`.trim());
    }
    const answer = events.find((e) => e.type === 'run_completed') as Ev;
    expect(await conv.locator('.entry-end .say').textContent()).toBe((answer.answer as { value: string }).value);
    await shoot(page.locator('.run-views'), shots, 'inspector-conversation.png', { docs: true });

    // The waterfall: a bar per model call and per tool attempt, and per step.
    await page.getByRole('tab', { name: 'Waterfall' }).click();
    await page.locator('svg.waterfall-svg').waitFor();
    expect(await page.locator('rect.wf-bar.model').count()).toBe(
      events.filter((e) => e.type === 'model_started' || (e.type === 'tool_result' && e.reservation)).length,
    );
    expect(await page.locator('rect.wf-bar.tool').count()).toBe(events.filter((e) => e.type === 'tool_started').length);
    expect(await page.locator('rect.wf-bar.step').count()).toBeGreaterThan(0);
    // Cost and tokens per model call, on hover and in the table.
    const firstModel = responses[0] as Ev;
    const usage = firstModel.usage as { inputTokens: number; outputTokens: number };
    expect(await page.locator('rect.wf-bar.model title').first().textContent()).toContain(`${usage.inputTokens} in / ${usage.outputTokens} out`);
    expect(page.url()).toMatch(/#waterfall$/);
    await shoot(page.locator('.run-views'), shots, 'inspector-waterfall-demo.png');

    // The event timeline is still there, a tab away, with the keyboard.
    await page.getByRole('tab', { name: 'Waterfall' }).press('ArrowRight');
    expect(await page.evaluate(() => (globalThis as { document?: { activeElement?: { id?: string } } }).document?.activeElement?.id)).toBe('tab-events');
    expect(await page.locator('table.timeline tbody tr').count()).toBe(events.length);

    // A narrow window: the page itself never scrolls sideways, whichever tab is shown.
    await page.setViewportSize({ width: 400, height: 800 });
    for (const tab of ['Conversation', 'Waterfall', 'Events']) {
      await page.getByRole('tab', { name: tab }).click();
      expect(await page.locator('html').evaluate((html) => html.scrollWidth <= html.clientWidth), tab).toBe(true);
    }
    await page.close();
  });

  it('loads an offloaded tool result when it is opened, and a child run’s link opens the child', async () => {
    const page = await open('/ui/runs/cv-lead');
    await finished(page);
    const read = page.locator('.entry-tool', { has: page.locator('h3 code', { hasText: 'read_page' }) });
    const details = read.locator('details.offloaded');
    expect(await details.locator('summary').textContent()).toMatch(/in S3, \d+\.\d KB: open to load it/);
    expect(await read.textContent()).not.toContain(BIG_PAGE_MARK);
    await details.locator('summary').click();
    await expect.poll(() => read.locator('.load-status').textContent()).toMatch(/^Loaded \d+\.\d KB, sha256 checked\.$/);
    expect(await read.locator('.slot-result pre:not(.summary)').textContent()).toContain(BIG_PAGE_MARK);

    // The parent waited for its child with no worker: two steps and a gap between them that says so.
    await page.getByRole('tab', { name: 'Waterfall' }).click();
    await expect.poll(() => page.locator('rect.wf-bar.step').count()).toBeGreaterThanOrEqual(2);
    expect(await page.locator('rect.wf-gap title').allTextContents()).toContainEqual(expect.stringMatching(/^waits for a child run: /));
    await shoot(page.locator('.run-views'), shots, 'inspector-waterfall.png', { docs: true });
    await page.getByRole('tab', { name: 'Conversation' }).click();

    const ask = page.locator('.entry-tool', { has: page.locator('h3 code', { hasText: 'ask_helper' }) });
    const child = ask.locator('a[href^="/ui/runs/"]');
    const childId = (await child.textContent()) ?? '';
    expect(childId).not.toBe('');
    expect((await client.getRun(childId)).agent.name).toBe('helper');
    expect(await ask.locator('.slot-result').textContent()).toContain('Chapter 1 is short.');
    await child.click();
    await page.waitForURL(`**/ui/runs/${childId}`);
    await finished(page);
    expect(await page.locator('.entry-turn .say').first().textContent()).toBe('Chapter 1 is short.');
    expect(await page.locator('.entry-input a').textContent()).toBe('cv-lead');
    await page.close();
  });

  it('renders hostile model text and tool output as text, and runs none of it', async () => {
    const page = await open('/ui/runs/cv-xss');
    await finished(page);
    const conv = page.locator('ol.conversation');
    const text = (await conv.textContent()) ?? '';
    expect(text).toContain(`Reading ${HOSTILE.svg}`);
    expect(text).toContain(`Done: ${HOSTILE.script} ${HOSTILE.img}`);
    // Inside tool output and arguments, as JSON shows them.
    for (const markup of [HOSTILE.script, HOSTILE.link]) expect(text).toContain(JSON.stringify(markup).slice(1, -1));
    expect(await page.evaluate(() => (globalThis as { __xss?: unknown }).__xss)).toBeUndefined();
    expect(
      await page.locator('main img, main script, main iframe, main svg:not(.chart-svg), main [onerror], main [onload], main a[href^="javascript"]').count(),
    ).toBe(0);
    await page.close();
  });

  it('shows the answer growing while the model writes, drops an abandoned attempt, resumes after a lost connection, then shows the logged answer', async () => {
    const stub = new StreamStub();
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    // The dropped connection is the test's own doing.
    watchProblems(page, problems, [/net::ERR_CONNECTION_RESET/]);
    await page.route(
      (url) => url.pathname === '/runs/cv-live',
      (route) => route.fulfill({ json: stub.view() }),
    );
    await page.route(
      (url) => url.pathname === '/runs/cv-live/stream',
      (route) => stub.stream(route),
    );
    const w1 = { epoch: 1, nonce: 'n1' };
    const w2 = { epoch: 2, nonce: 'n2' };
    const base = { v: 1 };
    stub.release(
      {
        type: 'event',
        event: {
          ...base,
          seq: 1,
          type: 'run_started',
          at: 1_000,
          by: { epoch: 0, nonce: 'create:1' },
          agent: { name: 'poet', version: '1.0.0' },
          input: { kind: 'inline', value: 'A poem, please.' },
          tools: [],
        },
      },
      { type: 'event', event: { ...base, seq: 2, type: 'model_started', at: 1_100, by: w1, step: 1 } },
      { type: 'text', callSeq: 2, attempt: 1, index: 0, text: 'Roses ' },
    );
    await page.goto(new URL('/ui/runs/cv-live', stack.apiUrl).href);
    const streaming = page.locator('.entry-turn .say.streaming');
    await expect.poll(() => streaming.textContent()).toBe('Roses ');
    stub.release({ type: 'text', callSeq: 2, attempt: 1, index: 1, text: `are ${STREAMED} red` });
    await expect.poll(() => streaming.textContent()).toBe(`Roses are ${STREAMED} red`);
    expect(await page.locator('dl.facts .status-running').count()).toBe(1);

    // The connection drops: the page tries again after the last item it applied, and shows no item twice.
    stub.failNext = true;
    stub.release({ type: 'text', callSeq: 2, attempt: 1, index: 2, text: ', and' });
    await expect.poll(() => streaming.textContent()).toBe(`Roses are ${STREAMED} red, and`);
    stub.release({ type: 'text', callSeq: 2, attempt: 1, index: 3, text: ' more' });
    await expect.poll(() => streaming.textContent()).toBe(`Roses are ${STREAMED} red, and more`);
    // The request after the dropped one asked from the same cursor.
    expect(stub.aborted).toHaveLength(1);
    const afterDrop = stub.requests[stub.requests.indexOf(stub.aborted[0] as URLSearchParams) + 1];
    expect(afterDrop?.get('after')).toBe(stub.aborted[0]?.get('after'));
    expect(stub.aborted[0]?.get('after')).toMatch(/^k[45]$/);
    await shoot(page.locator('.run-views'), shots, 'inspector-live-stream.png');

    // The worker died: the next worker reserves the step again, and the old attempt's text goes.
    stub.release(
      { type: 'event', event: { ...base, seq: 3, type: 'model_started', at: 5_000, by: w2, step: 1 } },
      { type: 'discard', callSeq: 2 },
      { type: 'text', callSeq: 3, attempt: 2, index: 0, text: 'Violets' },
    );
    await expect.poll(() => streaming.textContent()).toBe('Violets');
    expect(await page.locator('#conv-turn-2').getAttribute('class')).toContain('abandoned');
    expect(await page.locator('#conv-turn-2').textContent()).not.toContain('Roses');
    stub.release({ type: 'text', callSeq: 3, attempt: 2, index: 1, text: ' are' });
    await expect.poll(() => streaming.textContent()).toBe('Violets are');

    // The response is logged: its text replaces the streamed one.
    stub.release(
      {
        type: 'event',
        event: {
          ...base,
          seq: 4,
          type: 'model_response',
          at: 6_000,
          by: w2,
          text: { kind: 'inline', value: 'Violets are blue. <script>window.__xss=10</script>' },
          calls: [],
          usage: { inputTokens: 12, outputTokens: 7 },
          costUsd: 0.0001,
          stopReason: 'end_turn',
        },
      },
      { type: 'event', event: { ...base, seq: 5, type: 'run_completed', at: 6_001, by: w2, answer: { kind: 'inline', value: 'Violets are blue.' } } },
    );
    stub.finish();
    await expect.poll(() => page.locator('#conv-turn-3 .say').textContent()).toBe('Violets are blue. <script>window.__xss=10</script>');
    expect(await streaming.count()).toBe(0);
    await expect.poll(() => page.locator('.live').textContent(), { timeout: 20_000 }).toMatch(/^Finished: completed/);
    expect(await page.evaluate(() => (globalThis as { __xss?: unknown }).__xss)).toBeUndefined();
    expect(await page.locator('main img, main script').count()).toBe(0);
    await page.close();
  });

  it('shows a real run’s answer growing as the scripted model writes it, as text', async () => {
    await client.startRun({ agent: 'slow', runId: 'cv-slow', input: 'Write slowly.' });
    const page = await open('/ui/runs/cv-slow');
    const streaming = page.locator('.entry-turn .say.streaming');
    const seen: string[] = [];
    for (let i = 0; i < 1_200 && !/^Finished/.test((await page.locator('.live').textContent()) ?? ''); i++) {
      const text = await streaming.textContent({ timeout: 100 }).catch(() => undefined);
      if (text && seen.at(-1) !== text) seen.push(text);
    }
    // Text grew in at least two steps before the answer was logged, each a beginning of it.
    expect(seen.length, seen.join(' | ')).toBeGreaterThanOrEqual(2);
    for (const text of seen) expect(SLOW_TEXT.startsWith(text), text).toBe(true);
    await expect.poll(() => page.locator('.live').textContent()).toMatch(/^Finished: completed/);
    expect(await page.locator('.entry-turn .say').textContent()).toBe(SLOW_TEXT);
    expect(await page.evaluate(() => (globalThis as { __xss?: unknown }).__xss)).toBeUndefined();
    expect(await page.locator('main img, main script').count()).toBe(0);
    await page.close();
  });

  it('draws approvals, signals, parks, follow-up messages, attachments, a cancel and a failed model call', async () => {
    const stub = new StreamStub('cv-kinds');
    const w = { epoch: 1, nonce: 'k' };
    const inline = (value: unknown) => ({ kind: 'inline', value });
    const event = (e: Record<string, unknown>) => ({ type: 'event', event: { v: 1, by: w, at: 1_000 + Number(e.seq) * 100, ...e } });
    const bytes = Buffer.from('fake png bytes');
    const png = { kind: 'blob', sha256: createHash('sha256').update(bytes).digest('hex'), mediaType: 'image/png', bytes: 2048, name: 'receipt.png' };
    const forged = { kind: 'blob', sha256: 'e'.repeat(64), mediaType: 'text/html', bytes: 14, name: 'forged.html' };
    stub.release(
      event({
        seq: 1,
        type: 'run_started',
        by: { epoch: 0, nonce: 'create:k' },
        agent: { name: 'clerk', version: '2' },
        input: inline({ text: 'Pay it.', files: [png, forged] }),
        parent: { runId: 'cv-boss', callId: '7-0' },
        tools: [
          { name: 'pay', policy: 'escalate' },
          { name: 'wait_ok', policy: 'rerun' },
        ],
      }),
      event({ seq: 2, type: 'model_started', step: 1 }),
      event({ seq: 3, type: 'model_failed', code: 'model_rate_limited', message: 'slow down', retryable: true }),
      event({ seq: 4, type: 'model_started', step: 1 }),
      event({
        seq: 5,
        type: 'model_response',
        text: inline('Paying, once approved.'),
        usage: { inputTokens: 5, outputTokens: 3 },
        costUsd: 0.0001,
        stopReason: 'tool_use',
        calls: [
          { callId: '5-0', providerId: 'a', name: 'pay', args: inline({ cents: 100 }) },
          { callId: '5-1', providerId: 'b', name: 'wait_ok', args: inline({}) },
        ],
      }),
      event({ seq: 6, type: 'approval_requested', callId: '5-0', argsHash: 'a'.repeat(64), expiresAt: 9_000_000 }),
      event({
        seq: 7,
        type: 'approval_decided',
        callId: '5-0',
        decision: 'edit',
        argsHash: 'b'.repeat(64),
        args: inline({ cents: 50 }),
        comment: 'half now',
        decidedBy: 'ops@example.com',
        inboxId: 'i1',
      }),
      event({ seq: 8, type: 'tool_started', callId: '5-0', attempt: 1, notAfter: 9_000_000 }),
      event({ seq: 9, type: 'tool_started', callId: '5-1', attempt: 1, notAfter: 9_000_000, wait: { kind: 'signal', signal: 'ok', until: 9_000_000 } }),
      event({ seq: 10, type: 'attention_required', reason: 'unknown_outcome', callId: '5-0', detail: 'pay (5-0) started with no result' }),
      event({
        seq: 11,
        type: 'attention_resolved',
        attentionSeq: 10,
        callId: '5-0',
        outcome: 'succeeded',
        result: inline({ paid: 50 }),
        resolvedBy: 'ops@example.com',
        inboxId: 'i2',
      }),
      event({ seq: 12, type: 'tool_result', callId: '5-1', ok: true, source: 'signal', sentBy: 'bob', inboxId: 'i3', output: inline({ ok: true }) }),
      event({ seq: 13, type: 'user_message', input: inline('And the rest?'), sentBy: 'alice', inboxId: 'i4' }),
      event({ seq: 14, type: 'cancel_requested', requestedBy: 'alice', inboxId: 'i5', reason: 'changed my mind' }),
      event({ seq: 15, type: 'run_cancelled', unresolved: [] }),
    );
    stub.finish();
    stub.status = 'cancelled';
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    watchProblems(page, problems);
    await page.route(
      (url) => url.pathname === '/runs/cv-kinds',
      (route) => route.fulfill({ json: stub.view() }),
    );
    await page.route(
      (url) => url.pathname === '/runs/cv-kinds/stream',
      (route) => stub.stream(route),
    );
    // Both attachments answer the same bytes (GET /attachments/{sha256}): only the one whose sha256 they match is saved.
    await page.route(
      (url) => url.pathname.startsWith('/attachments/'),
      (route) => route.fulfill({ body: bytes, contentType: 'application/octet-stream' }),
    );
    await page.goto(new URL('/ui/runs/cv-kinds', stack.apiUrl).href);
    await expect.poll(() => page.locator('.live').textContent(), { timeout: 30_000 }).toMatch(/^Finished: cancelled/);
    const text = (sel: string) => page.locator(sel).textContent();
    expect(await text('.entry-input .slot-origin')).toBe('Child run of cv-boss (call 7-0). ');
    expect(await page.locator('.entry-input .slot-origin a').getAttribute('href')).toBe('/ui/runs/cv-boss');
    expect(await page.locator('.entry-input ul.attachments li').first().textContent()).toMatch(/^receipt\.png image\/png, 2\.0 KB, sha256 [0-9a-f]{12}/);
    const download = page.waitForEvent('download');
    await page.locator('.entry-input ul.attachments a', { hasText: 'receipt.png' }).click();
    expect((await download).suggestedFilename()).toBe('receipt.png');
    await page.locator('.entry-input ul.attachments a', { hasText: 'forged.html' }).click();
    await expect.poll(() => page.locator('.entry-input ul.attachments li').nth(1).textContent()).toMatch(/sha256 mismatch: the log recorded e{12}.*Not saved\./);
    expect(page.url()).toMatch(/\/ui\/runs\/cv-kinds$/);
    expect(await text('#conv-turn-2 .slot-status')).toBe('failed: model_rate_limited: slow down (retryable: tried again)');
    expect(await text('#conv-turn-4 h3')).toContain('Assistant, step 1 (attempt 2)');
    const pay = page.locator('#conv-call-5-0');
    expect(await pay.locator('.slot-approval p').textContent()).toMatch(
      // A moment on another day than today carries its date (format.ts `when`).
      /^Approval asked at (?:\d{4}-\d\d-\d\d )?[\d:.]+, rejected if unanswered by (?:\d{4}-\d\d-\d\d )?[\d:.]+\. Approved with edited arguments by ops@example\.com at (?:\d{4}-\d\d-\d\d )?[\d:.]+: “half now”$/,
    );
    expect(await pay.locator('.slot-approval pre').textContent()).toBe('{"cents":50}');
    expect(await pay.locator('.slot-result').textContent()).toContain('Recorded by ops@example.com');
    expect(await text('#conv-e10')).toContain('unknown_outcome: pay (5-0) started with no result');
    expect(await text('#conv-e10 .slot-resolved')).toMatch(/^Resolved: succeeded, by ops@example\.com at /);
    const signal = page.locator('#conv-call-5-1');
    expect(await signal.locator('.slot-run').textContent()).toMatch(/Waits for signal ok until/);
    expect(await signal.locator('.slot-result').textContent()).toContain('Signal delivered by bob');
    expect(await text('#conv-e13')).toContain('Follow-up message from alice');
    expect(await text('#conv-e13 .say')).toBe('And the rest?');
    expect(await text('#conv-e14 h3')).toContain('Cancel requested by alice: changed my mind');
    expect(await text('#conv-e15 h3')).toContain('Run cancelled');
    await page.close();
  });

  it('draws a 600-event run: every turn, call and event once, caught up in pages', async () => {
    const stub = new StreamStub('cv-big');
    const w = { epoch: 1, nonce: 'big' };
    const event = (e: Record<string, unknown>) => ({ type: 'event', event: { v: 1, by: w, ...e } });
    const inline = (value: unknown) => ({ kind: 'inline', value });
    let seq = 1;
    stub.release(
      event({
        seq: seq++,
        type: 'run_started',
        at: 0,
        by: { epoch: 0, nonce: 'create:big' },
        agent: { name: 'big', version: '1' },
        input: inline('Go.'),
        tools: [{ name: 'step', policy: 'rerun' }],
      }),
    );
    const TURNS = 150;
    for (let t = 1; t <= TURNS; t++) {
      const reserved = seq++;
      stub.release(event({ seq: reserved, type: 'model_started', at: reserved * 10, step: t }), {
        type: 'text',
        callSeq: reserved,
        attempt: 1,
        index: 0,
        text: `Turn ${t}`,
      });
      const response = seq++;
      const callId = `${response}-0`;
      stub.release(
        event({
          seq: response,
          type: 'model_response',
          at: response * 10,
          text: inline(`Turn ${t} <b>${t}</b>`),
          usage: { inputTokens: t, outputTokens: 1 },
          costUsd: 0.0001,
          stopReason: 'tool_use',
          calls: [{ callId, providerId: 'p', name: 'step', args: inline({ t }) }],
        }),
        event({ seq: seq, type: 'tool_started', at: seq++ * 10, callId, attempt: 1, notAfter: 10_000_000 }),
        event({ seq: seq, type: 'tool_result', at: seq++ * 10, callId, ok: true, source: 'tool', output: inline({ done: t }) }),
      );
    }
    const last = seq++;
    stub.release(
      event({ seq: last, type: 'model_started', at: last * 10, step: TURNS + 1 }),
      event({
        seq: seq,
        type: 'model_response',
        at: seq++ * 10,
        text: inline('All done.'),
        usage: { inputTokens: 1, outputTokens: 1 },
        costUsd: 0,
        stopReason: 'end_turn',
        calls: [],
      }),
      event({ seq: seq, type: 'run_completed', at: seq++ * 10, answer: inline('All done.') }),
    );
    stub.finish();
    const events = seq - 1;
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    watchProblems(page, problems);
    await page.route(
      (url) => url.pathname === '/runs/cv-big',
      (route) => route.fulfill({ json: stub.view() }),
    );
    await page.route(
      (url) => url.pathname === '/runs/cv-big/stream',
      (route) => stub.stream(route),
    );
    const started = Date.now();
    await page.goto(new URL('/ui/runs/cv-big', stack.apiUrl).href);
    await expect.poll(() => page.locator('.live').textContent(), { timeout: 30_000 }).toMatch(/^Finished: completed/);
    const inPage = await page.evaluate(() => Math.round(performance.now()));
    console.info(
      `inspector: a ${events}-event run (${stub.items.length} stream items) drawn and finished ${inPage} ms after navigation started (${Date.now() - started} ms by the test's clock)`,
    );
    // More items than one page: the page asked again at once, from where the first page ended.
    expect(stub.requests[1]?.get('after')).toBe('k500');
    expect(await page.locator('.entry-turn').count()).toBe(TURNS + 1);
    expect(await page.locator('.entry-tool').count()).toBe(TURNS);
    expect(await page.locator('.entry-turn .say.streaming').count()).toBe(0);
    expect(await page.locator('#conv-turn-2 .say').textContent()).toBe('Turn 1 <b>1</b>');
    expect(await page.locator('main b').count()).toBe(0);
    expect(await page.locator('table.timeline tbody tr').count()).toBe(events);
    await page.getByRole('tab', { name: 'Waterfall' }).click();
    await expect.poll(() => page.locator('rect.wf-bar.model').count()).toBe(TURNS + 1);
    expect(await page.locator('rect.wf-bar.tool').count()).toBe(TURNS);
    await page.close();
  });

  it('had no console errors, uncaught exceptions or CSP violations on any page', () => {
    expect(problems).toEqual([]);
  });
});
