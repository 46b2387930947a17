// Pages in a real browser: Debian's chromium driven by playwright-core. A page under test is
// watched for console errors, uncaught page errors and any request to another origin; a test
// asserts that list is empty. Without chromium the tests skip with a warning, except under
// CI=true, where a missing browser is a failure (CI installs it).
import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);
export const BROWSER_TIMEOUT_MS = 60_000;

/** Call at the top of a browser test file: says why it skips, or fails under CI. */
export function requireChromium(file: string): boolean {
  if (HAS_CHROMIUM) {
    return true;
  }
  if (process.env.CI === 'true') {
    throw new Error(`${file}: chromium is missing at ${CHROMIUM} and CI=true: install it`);
  }
  console.warn(
    `${file}: chromium was not found at ${CHROMIUM}; skipping the browser test ` +
      '(install it with `apt-get install -y chromium`).',
  );
  return false;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // The flags keep chromium off the network by itself (this machine's network is closed;
    // background fetches would fail noisily) and runnable as root in a container.
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface WatchedPage {
  context: BrowserContext;
  page: Page;
  /** Console errors, page errors and requests to another origin, in order. */
  problems: string[];
}

/** A fresh context and page whose every problem is recorded (see WatchedPage). */
export async function watchedPage(
  browser: Browser,
  origin: string,
  options: { viewport?: { width: number; height: number } } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext(options.viewport ? { viewport: options.viewport } : {});
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') {
      problems.push(`console: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  // The console names no URL for a failed load; this does.
  page.on('response', (response) => {
    if (response.status() >= 400) {
      problems.push(`${response.status()} for ${response.request().method()} ${response.url()}`);
    }
  });
  page.on('request', (request) => {
    const url = request.url();
    // data: and blob: URLs are the page's own; anything else must come from the origin.
    if (!/^(data|blob):/.test(url) && new URL(url).origin !== origin) {
      problems.push(`request to another origin: ${request.method()} ${url}`);
    }
  });
  return { context, page, problems };
}
