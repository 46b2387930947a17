// The API reference at /docs stands alone (docs/decisions.md "Deprecation and /docs"): in a
// real browser it renders Haven's operations with no request to any other origin, no console
// error, and none of the hosted features (AI agent, SDK generation, hosted client) that would
// need one.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildListeningTestApp, type TestApp } from '../../test/app.js';
import {
  BROWSER_TIMEOUT_MS,
  launchChromium,
  requireChromium,
  watchedPage,
} from '../../test/browser.js';

const enabled = requireChromium('docs-browser.test.ts');

describe.runIf(enabled)('/docs in chromium', () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser | undefined;

  beforeAll(async () => {
    t = await buildListeningTestApp();
    browser = await launchChromium();
  }, BROWSER_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  }, BROWSER_TIMEOUT_MS);

  it(
    'renders the reference from this origin only, without console errors or hosted features',
    async () => {
      if (!browser) {
        throw new Error('the browser did not start');
      }
      const origin = new URL(t.baseUrl).origin;
      const { context, page, problems, requestsSettled } = await watchedPage(browser, origin);
      try {
        const response = await page.goto(`${t.baseUrl}/docs`);
        expect(response?.status()).toBe(200);
        // The document is loaded and rendered: an operation summary of ours is on the page.
        await page
          .getByText('Whether this instance can serve requests')
          .first()
          .waitFor({ timeout: BROWSER_TIMEOUT_MS / 2 });
        await requestsSettled();
        const text = (await page.textContent('body')) ?? '';
        for (const hosted of ['Ask AI', 'Generate SDKs', 'Open API Client']) {
          expect(text, `the page offers "${hosted}"`).not.toContain(hosted);
        }
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS,
  );
});
