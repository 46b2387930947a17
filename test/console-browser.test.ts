// The developer console (CONTRACT.md §10.3) in Debian's chromium, against a real
// listening server: sign in, an org, a key whose secret the test then uses, usage drawn
// after requests, the key revoked and refused, an MCP token, a failing webhook's delivery
// retried, the trust list verified, the demo family offered to MCP tokens and not to webhooks. Every page fails on a console error, a page error or a
// request to another origin. Screenshots of the main screens: docs/ (UPDATE_SCREENSHOTS=1).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_FAMILY_ID } from '../src/modules/demo/demo-family.js';
import { buildListeningTestApp, type TestApp } from './app.js';
import { BROWSER_TIMEOUT_MS, launchChromium, requireChromium, watchedPage } from './browser.js';

const enabled = requireChromium('console-browser.test.ts');
// The committed screenshots (docs/console-*.png) are retaken with UPDATE_SCREENSHOTS=1;
// otherwise they go to a temporary directory, so a test run leaves the tree as it was.
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? new URL('../docs/', import.meta.url).pathname
  : `${mkdtempSync(join(tmpdir(), 'haven-console-'))}/`;
const WAIT = { timeout: BROWSER_TIMEOUT_MS / 3 };

describe.runIf(enabled)('the developer console in chromium', () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser | undefined;

  beforeAll(async () => {
    t = await buildListeningTestApp({
      // Webhook attempts at once: a failing endpoint's delivery fails within the test.
      tuning: { jobPollingIntervalSeconds: 0.5, webhookRetryDelaysSeconds: [0, 0, 0, 0, 0, 0, 0] },
    });
    browser = await launchChromium();
  }, BROWSER_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  }, BROWSER_TIMEOUT_MS);

  async function signedIn(viewport = { width: 1280, height: 900 }) {
    if (!browser) {
      throw new Error('the browser did not start');
    }
    const watched = await watchedPage(browser, new URL(t.baseUrl).origin, { viewport });
    const response = await watched.page.goto(`${t.baseUrl}/console/`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await watched.page.getByRole('button', { name: 'Sign in to the sandbox' }).click();
    await watched.page.getByRole('heading', { name: 'Organizations' }).waitFor(WAIT);
    return watched;
  }

  // Evaluated in the page (as text: this file is compiled without the DOM's types).
  const tokenOf = (page: Page) =>
    page.evaluate("sessionStorage.getItem('haven.console.token')") as Promise<string>;

  /** Ada's Family for the signed-in user, made through the API as a parent's app would. */
  async function createOwnFamily(page: Page): Promise<void> {
    const setup = await fetch(`${t.baseUrl}/api/v1/setup/quick`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await tokenOf(page)}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ child_name: 'Ada', birth_date: '2015-06-01' }),
    });
    expect(setup.status).toBe(201);
  }

  it(
    'creates an org and a key, shows usage, and revokes the key so that it is refused',
    async () => {
      const { context, page, problems } = await signedIn();
      try {
        // Every section of §10.3 is there from the start, an org or not.
        for (const heading of ['API keys', 'Usage', 'MCP tokens', 'Webhooks', 'Trust list']) {
          await page.getByRole('heading', { name: heading }).waitFor(WAIT);
        }
        await page.getByLabel('Name', { exact: true }).fill('Console Org');
        await page.getByRole('button', { name: 'Create organization' }).click();
        await page.getByRole('heading', { name: 'API keys' }).waitFor(WAIT);

        await page.getByLabel('Key name').fill('ci-key');
        await page.getByRole('checkbox', { name: 'read:families' }).check();
        await page.getByRole('radio', { name: 'test' }).check();
        await page.getByRole('button', { name: 'Create key' }).click();
        const region = page.getByRole('region', { name: 'New key' });
        await region.waitFor(WAIT);
        const secret = ((await region.locator('code').textContent()) ?? '').trim();
        expect(secret).toMatch(/^svc_test_/);
        const row = page.getByRole('row').filter({ hasText: 'ci-key' });
        await expect.poll(() => row.textContent()).toContain('active');

        // The secret works, from outside the page; its requests are what usage will show.
        for (let i = 0; i < 5; i++) {
          const res = await fetch(`${t.baseUrl}/api/v1/developer/families`, {
            headers: { authorization: `Bearer ${secret}` },
          });
          expect(res.status).toBe(200);
        }
        await t.app.flushUsage();
        await page.getByRole('button', { name: 'Refresh' }).click();
        const chart = page.getByRole('img', { name: 'Requests per day' });
        await chart.waitFor(WAIT);
        expect(await chart.locator('rect').count()).toBeGreaterThan(0);
        await page.screenshot({ path: `${SCREENSHOTS}console-keys.png`, fullPage: true });

        page.once('dialog', (dialog) => void dialog.accept());
        await row.getByRole('button', { name: 'Revoke' }).click();
        await expect.poll(() => row.textContent(), WAIT).toContain('revoked');
        const refused = await fetch(`${t.baseUrl}/api/v1/developer/families`, {
          headers: { authorization: `Bearer ${secret}` },
        });
        expect(refused.status).toBe(401);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS * 2,
  );

  it(
    'mints an MCP token, retries a failing webhook delivery, and verifies the trust list',
    async () => {
      const { context, page, problems } = await signedIn();
      try {
        await createOwnFamily(page);
        await page.reload();
        await page.getByRole('heading', { name: 'MCP tokens' }).waitFor(WAIT);

        await page.getByLabel('Label').fill('assistant');
        await page.getByRole('button', { name: 'Mint token' }).click();
        const minted = page.getByRole('region', { name: 'New MCP token' });
        await minted.waitFor(WAIT);
        expect(await minted.locator('code').textContent()).toMatch(/^svcmcp_/);

        // An endpoint nothing listens on: every attempt fails.
        await page.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/hooks');
        await page.getByRole('button', { name: 'Create webhook' }).click();
        await page.getByRole('region', { name: 'New webhook secret' }).waitFor(WAIT);
        await page.getByRole('button', { name: 'Deliveries' }).click();
        await page.getByRole('button', { name: 'Send test' }).click();
        const failed = page.getByRole('row').filter({ hasText: 'failed' });
        await expect
          .poll(async () => {
            await page.getByRole('button', { name: 'Refresh deliveries' }).click();
            return failed.count();
          }, WAIT)
          .toBeGreaterThan(0);
        const attempts = (await failed.first().locator('td').nth(3).textContent()) ?? '';
        await failed.first().getByRole('button', { name: 'Retry' }).click();
        await expect
          .poll(async () => {
            await page.getByRole('button', { name: 'Refresh deliveries' }).click();
            return page
              .getByRole('row')
              .filter({ hasText: 'failed' })
              .first()
              .locator('td')
              .nth(3)
              .textContent();
          }, WAIT)
          .not.toBe(attempts);

        await expect
          .poll(() => page.getByRole('status').filter({ hasText: 'Signature' }).textContent(), WAIT)
          .toContain('Signature verified');
        await page.screenshot({ path: `${SCREENSHOTS}console-webhooks.png`, fullPage: true });
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS * 2,
  );

  it(
    'offers the demo family where the action works: an MCP token mints on it, a webhook is not offered it',
    async () => {
      const { context, page, problems } = await signedIn();
      try {
        const mcp = page.getByRole('region', { name: 'MCP tokens' });
        const hooks = page.getByRole('region', { name: 'Webhooks' });
        const options = (region: typeof mcp) =>
          region.getByLabel('Family').locator('option').allTextContents();
        // A new sandbox user has no family of its own: the demo family is all it is shown.
        await expect.poll(() => options(mcp), WAIT).toEqual(['Rivera Family (demo)']);
        expect(await mcp.getByLabel('Family').inputValue()).toBe(DEMO_FAMILY_ID);
        await hooks.getByText('create a family first').waitFor(WAIT);
        expect(await hooks.getByLabel('Family').count()).toBe(0);
        expect(await hooks.getByRole('button', { name: 'Create webhook' }).count()).toBe(0);

        await mcp.getByLabel('Label').fill('demo assistant');
        await mcp.getByRole('button', { name: 'Mint token' }).click();
        const minted = page.getByRole('region', { name: 'New MCP token' });
        await minted.waitFor(WAIT);
        const secret = ((await minted.locator('code').textContent()) ?? '').trim();
        expect(secret).toMatch(/^svcmcp_/);
        await expect
          .poll(
            () => mcp.getByRole('row').filter({ hasText: 'demo assistant' }).textContent(),
            WAIT,
          )
          .toContain('Rivera Family (demo)');
        await mcp.screenshot({ path: `${SCREENSHOTS}console-mcp-demo.png` });
        await hooks.screenshot({ path: `${SCREENSHOTS}console-webhooks-no-family.png` });

        // The token works from an assistant: it reads the demo family, its writes are refused.
        const tool = async (name: string, args: object) => {
          const res = await fetch(`${t.baseUrl}/mcp`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${secret}`,
              accept: 'application/json, text/event-stream',
              'content-type': 'application/json',
            },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { name, arguments: args },
            }),
          });
          expect(res.status).toBe(200);
          return ((await res.json()) as { result: Record<string, unknown> }).result;
        };
        expect(await tool('get_family', {})).toMatchObject({
          structuredContent: { id: DEMO_FAMILY_ID, name: 'Rivera Family (demo)' },
        });
        expect(await tool('create_child', { name: 'X', birth_date: '2015-01-01' })).toMatchObject({
          isError: true,
          content: [{ type: 'text', text: '403 demo family is read-only' }],
        });

        // A family of the user's own: the webhook picker offers it, and it alone.
        await createOwnFamily(page);
        await page.reload();
        await expect.poll(() => options(hooks), WAIT).toEqual(["Ada's Family"]);
        expect(await options(mcp)).toEqual(["Ada's Family", 'Rivera Family (demo)']);
        await hooks.screenshot({ path: `${SCREENSHOTS}console-webhooks-own-family.png` });
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS * 2,
  );

  it(
    'reads at 390 px, and a refused token returns to sign-in with a message',
    async () => {
      const { context, page, problems } = await signedIn({ width: 390, height: 844 });
      try {
        await page.getByRole('heading', { name: 'Trust list' }).waitFor(WAIT);
        const overflow = (await page.evaluate(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        )) as number;
        expect(overflow).toBeLessThanOrEqual(0);
        await page.screenshot({ path: `${SCREENSHOTS}console-mobile.png`, fullPage: false });
        // A token that no longer works (expired, revoked): back to sign-in, told why.
        await page.evaluate("sessionStorage.setItem('haven.console.token', 'expired.token.value')");
        await page.reload();
        await page.getByRole('button', { name: 'Sign in to the sandbox' }).waitFor(WAIT);
        await expect
          .poll(() => page.getByRole('status').textContent(), WAIT)
          .toContain('sign in again');
        // The refused token's 401 is the one failed request this page makes, on purpose.
        expect(
          problems.filter((p) => !/401/.test(p)),
          problems.join('\n'),
        ).toEqual([]);
        expect(problems.some((p) => p.startsWith('401 for GET'))).toBe(true);
        await page.getByLabel('Session token').fill('');
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        expect(await page.getByRole('alert').textContent()).toContain('Paste a session token');
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS * 2,
  );
});
