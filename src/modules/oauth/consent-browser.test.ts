// The consent page in a real browser (Debian's chromium, driven by playwright-core): it
// renders under its own Content-Security-Policy without a violation, and clicking Approve
// lands on the client's callback with a code and the state.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../test/app.js';
import {
  BROWSER_TIMEOUT_MS,
  launchChromium,
  requireChromium,
  watchedPage,
} from '../../../test/browser.js';
import { DEMO_CHILDREN } from '../demo/demo-family.js';

const enabled = requireChromium('consent-browser.test.ts');

/** The client's redirect endpoint: records what it received and says so in a page. */
function startCallbackServer(): Promise<{ server: Server; url: string; received: string[] }> {
  const received: string[] = [];
  const server = createServer((request, response) => {
    received.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><title>callback</title><p>client callback reached</p>');
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `http://127.0.0.1:${port}/callback`, received });
    });
  });
}

describe.runIf(enabled)('consent page in chromium', () => {
  let t: TestApp;
  let base: string;
  let callback: Awaited<ReturnType<typeof startCallbackServer>>;
  let browser: Browser | undefined;

  beforeAll(async () => {
    t = await buildTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    callback = await startCallbackServer();
    browser = await launchChromium();
  }, BROWSER_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => callback?.server.close(resolve));
    await t?.close();
  }, BROWSER_TIMEOUT_MS);

  async function openConsent(state: string) {
    if (!browser) {
      throw new Error('the browser did not start');
    }
    // The callback is the client's own server, on another origin: only that one is allowed.
    const watched = await watchedPage(browser, new URL(base).origin);
    const { context, page } = watched;
    const problems = () =>
      watched.problems.filter((problem) => !problem.includes(new URL(callback.url).origin));
    const url = new URL('/oauth/authorize', base);
    url.searchParams.set('redirect_uri', `${callback.url}?client=haven`);
    url.searchParams.set('state', state);
    url.searchParams.set('client_id', 'haven');
    const response = await page.goto(url.href);
    expect(response?.status()).toBe(200);
    return { context, page, problems };
  }

  it(
    'lands on the callback with an sbxauth_ code and the state after Approve',
    async () => {
      const state = `st<"'&> é+/=`;
      const { context, page, problems } = await openConsent(state);
      try {
        const shown = await page.locator('li').allTextContents();
        expect(shown).toEqual(DEMO_CHILDREN.map((child) => child.name));
        // The inline style is applied: the CSP hash matches what the page carries.
        const approve = page.getByRole('link', { name: 'Approve' });
        const background = await page.evaluate(
          "getComputedStyle(document.querySelector('a.approve')).backgroundColor",
        );
        expect(background).toBe('rgb(29, 78, 216)');

        await approve.click();
        await page.waitForURL((url) => url.href.startsWith(callback.url), {
          timeout: BROWSER_TIMEOUT_MS / 2,
        });
        const landed = new URL(page.url());
        expect(landed.searchParams.get('client')).toBe('haven');
        expect(landed.searchParams.get('code')).toMatch(/^sbxauth_/);
        expect(landed.searchParams.get('state')).toBe(state);
        expect(await page.textContent('body')).toContain('client callback reached');
        expect(callback.received.some((url) => url.includes('code=sbxauth_'))).toBe(true);
        expect(problems()).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS,
  );

  it(
    'lands on the callback with error=access_denied after Deny',
    async () => {
      const { context, page, problems } = await openConsent('deny-state');
      try {
        await page.getByRole('link', { name: 'Deny' }).click();
        await page.waitForURL((url) => url.href.startsWith(callback.url), {
          timeout: BROWSER_TIMEOUT_MS / 2,
        });
        const landed = new URL(page.url());
        expect(landed.searchParams.get('error')).toBe('access_denied');
        expect(landed.searchParams.get('state')).toBe('deny-state');
        expect(landed.searchParams.has('code')).toBe(false);
        expect(problems()).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS,
  );
});
