// The console's Families list and a family's page (CONTRACT.md §10.3, the product plane) in
// Debian's chromium against a real listening server: a family made through the API with a
// child (an age signal in conflict with its birth date), a device and a connection; reached
// through the navigation; its sections, the child's ages and next change, the Policy link and
// back, a reload, the export downloaded as a file, and Delete family confirmed by typing the
// family's name, ending on the erasure receipt. The demo family's page offers neither act.
// Every page fails on a console error, a page error or a request to another origin.
// Screenshot: docs/console-family.png (UPDATE_SCREENSHOTS=1).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_FAMILY_ID } from '../src/modules/demo/demo-family.js';
import { buildListeningTestApp, type TestApp } from './app.js';
import { BROWSER_TIMEOUT_MS, launchChromium, requireChromium, watchedPage } from './browser.js';

const enabled = requireChromium('console-families.test.ts');
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? new URL('../docs/', import.meta.url).pathname
  : `${mkdtempSync(join(tmpdir(), 'haven-console-families-'))}/`;
const SCRATCH = `${mkdtempSync(join(tmpdir(), 'haven-console-families-scratch-'))}/`;
const WAIT = { timeout: BROWSER_TIMEOUT_MS / 3 };
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

interface Child {
  id: string;
  age: number;
  age_group: string;
  effective_age: number;
  age_conflict: boolean;
  next_age_change_on: string;
}

describe.runIf(enabled)("the console's families in chromium", () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser | undefined;

  beforeAll(async () => {
    t = await buildListeningTestApp({ tuning: { jobPollingIntervalSeconds: 0.5 } });
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
    await watched.page.getByRole('button', { name: 'Sign in to the sandbox' }).click();
    await watched.page.getByRole('heading', { name: 'Organizations' }).waitFor(WAIT);
    return watched;
  }

  const tokenOf = (page: Page) =>
    page.evaluate("sessionStorage.getItem('haven.console.token')") as Promise<string>;

  /** The API as the signed-in user, from outside the page (as a parent's app would call it). */
  async function api<T>(page: Page, method: string, path: string, body?: object) {
    const res = await fetch(`${t.baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${await tokenOf(page)}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  it(
    'lists the family, shows its page, exports it, and deletes it behind its typed name',
    async () => {
      const { context, page, problems, requestsSettled } = await signedIn();
      try {
        const family = await api<{ id: string; name: string }>(page, 'POST', '/families', {
          name: 'Lovelace Family',
        });
        expect(family.status).toBe(201);
        const familyId = family.body.id;
        const made = await api<{ id: string }>(page, 'POST', `/families/${familyId}/children`, {
          name: 'Ada',
          birth_date: '2015-06-01',
        });
        expect(made.status).toBe(201);
        const childId = made.body.id;
        // A platform says Ada is 8 or 9: out of line with her birth date, and counted.
        const signal = await api(page, 'POST', `/children/${childId}/age-signals`, {
          source: 'apple_declared_age_range',
          age_lower: 8,
          age_upper: 9,
        });
        expect(signal.status).toBe(201);
        const device = await api(page, 'POST', `/children/${childId}/devices`, {
          device_name: 'Hall tablet',
          platform_id: 'android',
        });
        expect(device.status).toBe(201);
        const connection = await api(page, 'POST', `/families/${familyId}/connections`, {
          platform_id: 'android',
        });
        expect(connection.status).toBe(201);
        const child = (await api<Child>(page, 'GET', `/children/${childId}`)).body;
        expect(child.age_conflict).toBe(true);
        expect(child.effective_age).toBe(9);

        // Families, through the navigation landmark: its own URL, a row linking to the family.
        const nav = page.getByRole('navigation', { name: 'Console' });
        await nav.getByRole('link', { name: 'Families' }).click();
        await page.getByRole('heading', { name: 'Families' }).waitFor(WAIT);
        expect(new URL(page.url()).hash).toBe('#/families');
        expect(await nav.getByRole('link', { name: 'Families' }).getAttribute('aria-current')).toBe(
          'page',
        );
        const link = page.getByRole('link', { name: 'Lovelace Family' });
        await link.waitFor(WAIT);
        expect(await page.getByRole('link', { name: 'Rivera Family (demo)' }).count()).toBe(1);
        await link.click();

        // The family's page: its name as the heading, then each section.
        const heading = page.getByRole('heading', { name: 'Lovelace Family', level: 2 });
        await heading.waitFor(WAIT);
        expect(new URL(page.url()).hash).toBe(`#/families/${familyId}`);
        for (const name of ['Children', 'Connections', 'Enforcement', 'Devices', 'Audit log']) {
          await page.getByRole('heading', { name, exact: true }).waitFor(WAIT);
        }
        const children = page.getByRole('region', { name: 'Children' });
        const row = children.getByRole('row').filter({ hasText: 'Ada' }).first();
        const cells = await row.locator('td').allTextContents();
        expect(cells.slice(0, 5)).toEqual([
          String(child.age),
          child.age_group,
          String(child.effective_age),
          'yes',
          child.next_age_change_on,
        ]);
        expect(child.next_age_change_on).toMatch(/^\d{4}-06-01$/);
        const signals = children.getByRole('list', { name: 'Age signals of Ada' });
        expect(await signals.textContent()).toContain('apple_declared_age_range: 8–9');
        expect(await children.textContent()).toContain('Age conflict');
        const connections = page.getByRole('region', { name: 'Connections' });
        // In the sandbox a catalog platform is connected at once (its adapter needs no secret).
        expect(
          await connections.getByRole('row').filter({ hasText: 'android' }).textContent(),
        ).toContain('connected');
        const devices = page.getByRole('region', { name: 'Devices' });
        const deviceRow = devices.getByRole('row').filter({ hasText: 'Hall tablet' });
        expect(await deviceRow.textContent()).toContain('active');
        // A device key's prefix is shown, its secret never.
        expect(await deviceRow.textContent()).toMatch(/svcdev_[^…\s]+…/);
        await requestsSettled();
        await page.screenshot({ path: `${SCREENSHOTS}console-family.png`, fullPage: true });

        // The child's Policy link has its own URL; back returns to the family's page.
        await row.getByRole('link', { name: 'Policy' }).click();
        await expect
          .poll(() => new URL(page.url()).hash, WAIT)
          .toBe(`#/families/${familyId}/children/${childId}/policy`);
        await page.goBack();
        await heading.waitFor(WAIT);
        expect(new URL(page.url()).hash).toBe(`#/families/${familyId}`);

        // A reload reopens the same view.
        await page.reload();
        await heading.waitFor(WAIT);
        await page.getByRole('heading', { name: 'Devices', exact: true }).waitFor(WAIT);

        // Export: a JSON file of the family's whole record, downloaded.
        const [download] = await Promise.all([
          page.waitForEvent('download', WAIT),
          page.getByRole('button', { name: 'Export', exact: true }).click(),
        ]);
        expect(download.suggestedFilename()).toBe(`haven-family-${familyId}.json`);
        const saved = `${SCRATCH}export.json`;
        await download.saveAs(saved);
        const exported = JSON.parse(readFileSync(saved, 'utf8')) as {
          family: { id: string };
          children: { id: string }[];
        };
        expect(exported.family.id).toBe(familyId);
        expect(exported.children.map((c) => c.id)).toEqual([childId]);

        // 390 px: the page reflows, its tables scroll inside their own boxes.
        await page.setViewportSize({ width: 390, height: 844 });
        await expect
          .poll(() => page.evaluate('document.documentElement.scrollWidth') as Promise<number>)
          .toBeLessThanOrEqual(390);
        await page.screenshot({ path: `${SCRATCH}console-family-390.png`, fullPage: true });
        await page.setViewportSize({ width: 1280, height: 900 });

        // Delete family: only once the family's name is typed.
        await page.getByRole('button', { name: 'Delete family', exact: true }).click();
        const typed = page.getByLabel('Family name', { exact: true });
        await typed.waitFor(WAIT);
        const confirm = page.getByRole('button', { name: 'Delete family', exact: true });
        expect(await confirm.count()).toBe(1);
        expect(await confirm.isDisabled()).toBe(true);
        await typed.fill('Lovelace');
        expect(await confirm.isDisabled()).toBe(true);
        await typed.fill('Lovelace Family');
        expect(await confirm.isEnabled()).toBe(true);
        await confirm.click();

        await page.getByRole('heading', { name: 'Erasure receipt' }).waitFor(WAIT);
        const receiptRegion = page.getByRole('region', { name: 'Erasure receipt' });
        const receiptText = (await receiptRegion.textContent()) ?? '';
        const receiptId = receiptText.match(UUID)?.[0];
        expect(receiptId).toBeDefined();
        await expect
          .poll(() => receiptRegion.getByRole('status').textContent(), WAIT)
          .toBe('completed');
        await expect
          .poll(() => receiptRegion.textContent(), WAIT)
          .toContain('verified (steward key');
        // Android was connected: its release ran in a job, and the receipt was read until then.
        expect(await receiptRegion.textContent()).toContain('android: released');
        // The receipt shown is Haven's, for this family; the family is gone.
        const receipt = await api<{ id: string; subject: { id: string; type: string } }>(
          page,
          'GET',
          `/erasures/${receiptId}`,
        );
        expect(receipt.status).toBe(200);
        expect(receipt.body.subject).toEqual({ id: familyId, type: 'family' });
        expect((await api(page, 'GET', `/families/${familyId}`)).status).toBe(404);
        await nav.getByRole('link', { name: 'Families' }).click();
        await page.getByRole('link', { name: 'Rivera Family (demo)' }).waitFor(WAIT);
        expect(await page.getByRole('link', { name: 'Lovelace Family' }).count()).toBe(0);
        await requestsSettled();
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS * 3,
  );

  it(
    'shows the demo family read-only: Export and Delete family are disabled with the reason',
    async () => {
      const { context, page, problems, requestsSettled } = await signedIn();
      try {
        await page
          .getByRole('navigation', { name: 'Console' })
          .getByRole('link', {
            name: 'Families',
          })
          .click();
        await page.getByRole('link', { name: 'Rivera Family (demo)' }).click();
        await page.getByRole('heading', { name: 'Rivera Family (demo)', level: 2 }).waitFor(WAIT);
        expect(new URL(page.url()).hash).toBe(`#/families/${DEMO_FAMILY_ID}`);
        const rows = page.getByRole('region', { name: 'Children' }).getByRole('row');
        await expect.poll(() => rows.count(), WAIT).toBeGreaterThan(1);
        for (const name of ['Export', 'Delete family']) {
          const button = page.getByRole('button', { name, exact: true });
          expect(await button.isDisabled()).toBe(true);
          expect(await button.getAttribute('aria-describedby')).toBe('family-acts-reason');
        }
        expect(await page.locator('#family-acts-reason').textContent()).toContain(
          'demo family is read-only',
        );
        await requestsSettled();
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS * 2,
  );
});
