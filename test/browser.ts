// Pages in a real browser: Debian's chromium driven by playwright-core. A page under test is
// watched for console errors, uncaught page errors and any request to another origin; a test
// asserts that list is empty. Without chromium the tests skip with a warning, except under
// CI=true, where a missing browser is a failure (CI installs it).
import { existsSync } from 'node:fs';
import {
  type Browser,
  type BrowserContext,
  chromium,
  type Page,
  type Request,
} from 'playwright-core';

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
  /**
   * Resolves once every request the page has started has finished or failed. Unlike
   * `waitForLoadState('networkidle')` it asks for no quiet period (which a loaded CI machine
   * can fail to give), and a timeout names the requests still open.
   */
  requestsSettled(timeoutMs?: number): Promise<void>;
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
  const inFlight = new Set<Request>();
  page.on('requestfinished', (request) => inFlight.delete(request));
  page.on('requestfailed', (request) => inFlight.delete(request));
  page.on('request', (request) => {
    inFlight.add(request);
    const url = request.url();
    // data: and blob: URLs are the page's own; anything else must come from the origin.
    if (!/^(data|blob):/.test(url) && new URL(url).origin !== origin) {
      problems.push(`request to another origin: ${request.method()} ${url}`);
    }
  });
  const requestsSettled = async (timeoutMs = BROWSER_TIMEOUT_MS / 2): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (inFlight.size > 0) {
      if (Date.now() > deadline) {
        const open = [...inFlight].map((request) => `${request.method()} ${request.url()}`);
        throw new Error(`requests still open after ${timeoutMs} ms: ${open.join(', ')}`);
      }
      // Let the page's event loop turn (its request events arrive through it).
      await page.waitForTimeout(50);
    }
  };
  return { context, page, problems, requestsSettled };
}
