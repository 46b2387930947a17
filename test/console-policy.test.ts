// The console's Policy page (CONTRACT.md §10.3) in Debian's chromium, against a real listening
// server: a child's policy opened by its URL (a reload keeps it), one row per rule with its
// origin, rules edited through forms drawn from their config schemas (a number, an enum, a
// list), the API's refusal of a bad value shown by the form, the age timeline's accessible
// name, the demo family read-only, and the page at 390 px. Every page fails on a console
// error, a page error or a request to another origin. Screenshots: docs/ (UPDATE_SCREENSHOTS=1).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_FAMILY_ID } from '../src/modules/demo/demo-family.js';
import { buildListeningTestApp, type TestApp } from './app.js';
import { BROWSER_TIMEOUT_MS, launchChromium, requireChromium, watchedPage } from './browser.js';

const enabled = requireChromium('console-policy.test.ts');
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? new URL('../docs/', import.meta.url).pathname
  : `${mkdtempSync(join(tmpdir(), 'haven-console-policy-'))}/`;
const WAIT = { timeout: BROWSER_TIMEOUT_MS / 3 };

/** Whether the locator's element has the focus (evaluated as text: no DOM types here). */
async function isFocused(locator: Locator): Promise<boolean> {
  const id = await locator.getAttribute('id');
  const focused = await locator
    .page()
    .evaluate('document.activeElement && document.activeElement.id');
  return id !== null && id === focused;
}

interface Rule {
  category: string;
  origin: 'age' | 'custom';
  enabled: boolean;
  config: Record<string, unknown>;
}
interface Child {
  age: number;
  age_group: string;
  next_age_change_on: string;
}

describe.runIf(enabled)("the console's Policy page in chromium", () => {
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

  async function signedIn(viewport = { width: 1280, height: 900 }) {
    if (!browser) {
      throw new Error('the browser did not start');
    }
    const watched = await watchedPage(browser, new URL(t.baseUrl).origin, { viewport });
    await watched.page.goto(`${t.baseUrl}/console/`);
    await watched.page.getByRole('button', { name: 'Sign in to the sandbox' }).click();
    await watched.page.getByRole('heading', { name: 'Organizations' }).waitFor(WAIT);
    const token = (await watched.page.evaluate(
      "sessionStorage.getItem('haven.console.token')",
    )) as string;
    return { ...watched, token };
  }

  /** A call to the API as the signed-in user, from outside the page. */
  async function api(token: string, method: string, path: string, body?: unknown) {
    const res = await fetch(`${t.baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** Ada's Family with its quick-setup policy, made as a parent's app would. */
  async function quickSetup(token: string, testClockId?: string) {
    const setup = await api(token, 'POST', '/setup/quick', {
      child_name: 'Ada',
      birth_date: '2015-06-01',
      ...(testClockId ? { test_clock_id: testClockId } : {}),
    });
    expect(setup.status).toBe(201);
    const body = setup.body as { family: { id: string }; child: { id: string } } & {
      policy: { id: string };
    };
    return { familyId: body.family.id, childId: body.child.id, policyId: body.policy.id };
  }

  const rulesOf = async (token: string, policyId: string) =>
    (await api(token, 'GET', `/policies/${policyId}/rules`)).body as unknown as Rule[];
  const versionOf = async (token: string, policyId: string) =>
    (await api(token, 'GET', `/policies/${policyId}`)).body.version as number;

  const ruleRow = (page: Page, category: string) =>
    page.getByRole('row').filter({ has: page.locator('code', { hasText: category }) });

  it(
    'opens a child’s policy by its URL and edits rules through their schemas',
    async () => {
      const { context, page, problems, token } = await signedIn();
      try {
        // The family lives by a test clock set to this machine's now (the test server's own
        // clock is fixed): the page places today by the family's clock.
        const clock = await api(token, 'POST', '/sandbox/test-clocks', {
          frozen_time: new Date().toISOString(),
        });
        expect(clock.status).toBe(201);
        const { familyId, childId, policyId } = await quickSetup(token, clock.body.id as string);
        const child = (await api(token, 'GET', `/children/${childId}`)).body as unknown as Child;
        const version = await versionOf(token, policyId);
        const url = `${t.baseUrl}/console/#/families/${familyId}/children/${childId}/policy`;
        await page.goto(url);
        await page.getByRole('heading', { name: 'Policy', exact: true }).waitFor(WAIT);

        // One row per rule the API holds, every one following the age.
        const apiRules = await rulesOf(token, policyId);
        expect(apiRules.length).toBe(20);
        const body = page.locator('table.rules tbody tr');
        await expect.poll(() => body.count(), WAIT).toBe(apiRules.length);
        for (const rule of apiRules) {
          const row = ruleRow(page, rule.category);
          expect(await row.count()).toBe(1);
          expect(await row.locator('td').nth(1).textContent()).toBe('age');
          expect(await row.getByRole('button', { name: 'Edit', exact: true }).count()).toBe(1);
        }
        expect(await page.locator('dd.policy-version').textContent()).toBe(String(version));
        await page.getByText('Ada', { exact: true }).waitFor(WAIT);

        // The age timeline names what it shows, from the child's own fields.
        const timeline = page.getByRole('img', { name: `Age ${child.age}, ` });
        await timeline.waitFor(WAIT);
        const label = (await timeline.getAttribute('aria-label')) ?? '';
        expect(label).toContain(`Age ${child.age}, ${child.age_group.replace('_', ' ')}`);
        expect(label).toContain(`next change on ${child.next_age_change_on}`);
        // Today's marker stands inside the band the API names, between this age and the next.
        const band = timeline.locator(`rect.band-${child.age_group}`);
        const left = Number(await band.getAttribute('x'));
        const right = left + Number(await band.getAttribute('width'));
        const marker = Number(await timeline.locator('.today circle').getAttribute('cx'));
        expect(marker).toBeGreaterThan(left);
        expect(marker).toBeLessThan(right);
        expect(await band.getAttribute('class')).toContain('band-current');

        // A rule written through the API shows as custom; a reload keeps the page.
        const put = await api(token, 'PUT', `/policies/${policyId}/rules/content_block_title`, {
          enabled: true,
          config: { titles: [] },
        });
        expect(put.status).toBe(200);
        await page.reload();
        await page.getByRole('heading', { name: 'Policy', exact: true }).waitFor(WAIT);
        await expect.poll(() => body.count(), WAIT).toBe(apiRules.length + 1);
        expect(await ruleRow(page, 'content_block_title').locator('td').nth(1).textContent()).toBe(
          'custom',
        );

        // A number out of its range: the API's own message, next to the form.
        const daily = ruleRow(page, 'time_daily_limit');
        await daily.getByRole('button', { name: 'Edit', exact: true }).click();
        const form = page.getByRole('form', { name: 'Edit Daily time limit' });
        await form.waitFor(WAIT);
        const minutes = form.getByLabel('Daily minutes', { exact: true });
        // The form takes the focus: its first control.
        expect(await isFocused(form.getByLabel('Rule enabled'))).toBe(true);
        await minutes.fill('2000');
        await form.getByRole('button', { name: 'Save' }).click();
        const refused = await api(token, 'PUT', `/policies/${policyId}/rules/time_daily_limit`, {
          enabled: true,
          config: { daily_minutes: 2000 },
        });
        expect(refused.status).toBe(400);
        await expect
          .poll(() => form.getByRole('alert').textContent(), WAIT)
          .toBe(refused.body.message);
        expect(await daily.locator('td').nth(1).textContent()).toBe('age');

        // A good number: saved, the row custom, the version one up.
        await minutes.fill('95');
        await form.getByRole('button', { name: 'Save' }).click();
        await expect
          .poll(() => page.getByRole('status').textContent(), WAIT)
          .toContain(`version ${version + 2}`);
        expect(await form.count()).toBe(0);
        expect(await daily.locator('td').nth(1).textContent()).toBe('custom');
        expect(await daily.locator('td').nth(3).textContent()).toContain('Daily minutes: 95');
        expect(await page.locator('dd.policy-version').textContent()).toBe(String(version + 2));
        // The focus is back on the row's Edit button.
        expect(await isFocused(daily.getByRole('button', { name: 'Edit', exact: true }))).toBe(
          true,
        );

        // An enum, as a select.
        const filter = ruleRow(page, 'web_filter_level');
        await filter.getByRole('button', { name: 'Edit', exact: true }).click();
        const filterForm = page.getByRole('form', { name: 'Edit Web filter level' });
        await filterForm.getByLabel('Level', { exact: true }).selectOption('strict');
        await filterForm.getByRole('button', { name: 'Save' }).click();
        await expect
          .poll(() => page.getByRole('status').textContent(), WAIT)
          .toContain(`version ${version + 3}`);
        expect(await filter.locator('td').nth(1).textContent()).toBe('custom');

        // A list of strings: an item added, and the rule switched off.
        const titles = ruleRow(page, 'content_block_title');
        await titles.getByRole('button', { name: 'Edit', exact: true }).click();
        const titlesForm = page.getByRole('form', { name: 'Edit Blocked titles' });
        await titlesForm.getByLabel('New item for Titles').fill('Night Game');
        await titlesForm.getByRole('button', { name: 'Add to Titles' }).click();
        await titlesForm.getByLabel('New item for Titles').fill('Another One');
        await titlesForm.getByLabel('New item for Titles').press('Enter');
        await titlesForm.getByRole('button', { name: 'Remove Titles 2' }).click();
        await titlesForm.getByLabel('Rule enabled').uncheck();
        await page.screenshot({ path: `${SCREENSHOTS}console-policy.png`, fullPage: true });
        await titlesForm.getByRole('button', { name: 'Save' }).click();
        await expect
          .poll(() => page.getByRole('status').textContent(), WAIT)
          .toContain(`version ${version + 4}`);
        expect(await titles.locator('td').nth(2).textContent()).toBe('off');
        expect(await titles.locator('td').nth(3).textContent()).toContain('Night Game');

        // Cancel and Escape close a form and change nothing.
        const chat = ruleRow(page, 'social_chat_control');
        await chat.getByRole('button', { name: 'Edit', exact: true }).click();
        const chatForm = page.getByRole('form', { name: 'Edit Chat' });
        await chatForm.getByLabel('Mode', { exact: true }).selectOption('everyone');
        await chatForm.getByRole('button', { name: 'Cancel' }).click();
        expect(await chatForm.count()).toBe(0);
        await chat.getByRole('button', { name: 'Edit', exact: true }).press('Enter');
        await chatForm.getByLabel('Mode', { exact: true }).press('Escape');
        expect(await chatForm.count()).toBe(0);

        // The API agrees with what the page shows.
        const after = new Map((await rulesOf(token, policyId)).map((r) => [r.category, r]));
        expect(after.get('time_daily_limit')).toMatchObject({
          origin: 'custom',
          config: { daily_minutes: 95 },
        });
        expect(after.get('web_filter_level')).toMatchObject({
          origin: 'custom',
          config: { level: 'strict' },
        });
        expect(after.get('content_block_title')).toMatchObject({
          origin: 'custom',
          enabled: false,
          config: { titles: ['Night Game'] },
        });
        expect(after.get('social_chat_control')?.origin).toBe('age');
        expect(await versionOf(token, policyId)).toBe(version + 4);

        // The one refused request is the out-of-range save, on purpose (and the browser's
        // console line for it).
        const expected = (p: string) =>
          p.startsWith(`400 for PUT ${t.baseUrl}/api/v1/policies/${policyId}/rules/`) ||
          (p.startsWith('console: ') && p.includes('400'));
        expect(
          problems.filter((p) => !expected(p)),
          problems.join('\n'),
        ).toEqual([]);
        expect(problems.filter((p) => p.startsWith('400 for PUT'))).toHaveLength(1);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS * 3,
  );

  it(
    'shows the demo family’s policy read-only, and reads at 390 px',
    async () => {
      const { context, page, problems, token } = await signedIn({ width: 390, height: 844 });
      try {
        const children = (await api(token, 'GET', `/families/${DEMO_FAMILY_ID}/children`))
          .body as unknown as Array<{ id: string }>;
        const demoChild = children[0];
        if (!demoChild) {
          throw new Error('the demo family has no child');
        }
        await page.goto(
          `${t.baseUrl}/console/#/families/${DEMO_FAMILY_ID}/children/${demoChild.id}/policy`,
        );
        await page.getByRole('heading', { name: 'Policy', exact: true }).waitFor(WAIT);
        await expect
          .poll(() => page.locator('table.rules tbody tr').count(), WAIT)
          .toBeGreaterThan(0);
        expect(await page.getByRole('button', { name: 'Edit', exact: true }).count()).toBe(0);
        await page.getByText('read-only').waitFor(WAIT);

        // A family of the user's own, its form open, at 390 px: nothing wider than the screen.
        const clock = await api(token, 'POST', '/sandbox/test-clocks', {
          frozen_time: new Date().toISOString(),
        });
        const { familyId, childId } = await quickSetup(token, clock.body.id as string);
        await page.goto(`${t.baseUrl}/console/#/families/${familyId}/children/${childId}/policy`);
        const row = ruleRow(page, 'time_scheduled_hours');
        await row.getByRole('button', { name: 'Edit', exact: true }).click();
        await page.getByRole('form', { name: 'Edit Allowed hours' }).waitFor(WAIT);
        await page.getByRole('img', { name: /^Age \d+/ }).waitFor(WAIT);
        const overflow = (await page.evaluate(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        )) as number;
        expect(overflow).toBeLessThanOrEqual(0);
        // The rules are still a table to assistive technology, each row with its button.
        expect(await row.count()).toBe(1);
        expect(await row.locator('td').nth(1).textContent()).toBe('age');
        await page.screenshot({ path: `${SCREENSHOTS}console-policy-mobile.png`, fullPage: true });
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS * 2,
  );
});
