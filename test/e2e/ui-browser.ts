import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Debian's chromium, driven by playwright-core (which never downloads a browser). Browser tests
 * skip with a message only on a machine without it that is not CI; on CI (CI set, or
 * LOGBOOK_REQUIRE_BROWSER=1 as .ci/run sets it) .ci/run installs it and a missing one fails.
 */
export const CHROMIUM = process.env.LOGBOOK_CHROMIUM ?? '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
export const SKIP_BROWSER = !HAVE_CHROMIUM && !process.env.CI && process.env.LOGBOOK_REQUIRE_BROWSER !== '1';
if (SKIP_BROWSER) console.warn(`browser tests skipped: no chromium at ${CHROMIUM} (apt-get install chromium, or set LOGBOOK_CHROMIUM); CI runs them`);

export function launchChromium(): Promise<Browser> {
  if (!HAVE_CHROMIUM) throw new Error(`CI needs chromium at ${CHROMIUM} for the browser tests (.ci/run installs Debian's chromium)`);
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/** Everything the page complained about: console errors, uncaught exceptions, CSP violations. */
export function watchProblems(page: Page, problems: string[], expected: RegExp[] = []): void {
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const where = message.location().url;
    const text = `${message.text()} (${where})`;
    if (!expected.some((re) => re.test(text))) problems.push(`console: ${text}`);
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
}

/** Screenshots go to a scratch directory; LOGBOOK_UPDATE_SCREENSHOTS=1 also copies them into docs/. */
export async function screenshot(page: Page, dir: string, name: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  await page.screenshot({ path: file, fullPage: true });
  if (process.env.LOGBOOK_UPDATE_SCREENSHOTS === '1') {
    mkdirSync('docs', { recursive: true });
    copyFileSync(file, join('docs', name));
  }
  return file;
}
