// The console's audit log and its pickers (CONTRACT.md §10.3, §12.1) in chromium against a
// real listening server. A family's log shows the entries of writes made through the API
// (actor, action, target, changes), newest first, a page at a time until the oldest;
// "Verify chain" recomputes the whole chain in the browser against the signed head and the
// steward's key. The org view offers only the orgs whose log the caller may read (owner or
// admin) and verifies an org's chain. The MCP token and webhook pickers offer only families
// where the action succeeds: a guardian mints an MCP token but may not add a webhook. Every
// page fails on a console error, a page error or a request to another origin; at 390 px
// nothing overflows. Screenshot: docs/console-audit-log.png (UPDATE_SCREENSHOTS=1).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildListeningTestApp, type TestApp } from './app.js';
import { BROWSER_TIMEOUT_MS, launchChromium, requireChromium, watchedPage } from './browser.js';

const enabled = requireChromium('console-audit.test.ts');
const SCRATCH = `${mkdtempSync(join(tmpdir(), 'haven-console-audit-'))}/`;
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? new URL('../docs/', import.meta.url).pathname
  : SCRATCH;
const WAIT = { timeout: BROWSER_TIMEOUT_MS / 3 };
/** The console's page of the timeline (audit-log.tsx PAGE_SIZE). */
const PAGE_SIZE = 25;

interface Entry {
  id: string;
  seq: number;
  action: string;
  actor: { type: string; label: string };
  target: { type: string; id: string };
  changes: Record<string, unknown>;
}

describe.runIf(enabled)('the console: audit log and pickers', () => {
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

  async function api(token: string, method: string, path: string, body?: unknown) {
    const res = await fetch(`${t.baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // biome-ignore lint/suspicious/noExplicitAny: a test reads the answers it asserts on
    return { status: res.status, json: (await res.json()) as any };
  }

  /** Another sandbox user, as a second person would sign in: its token and id. */
  async function otherUser(): Promise<{ token: string; id: string }> {
    const res = await fetch(`${t.baseUrl}/api/v1/sandbox/session-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(201);
    const token = ((await res.json()) as { access_token: string }).access_token;
    return { token, id: (await api(token, 'GET', '/auth/me')).json.id };
  }

  const idOf = async (token: string) => (await api(token, 'GET', '/auth/me')).json.id as string;

  /** Every entry of a chain through the API, newest first. */
  async function wholeLog(token: string, path: string): Promise<Entry[]> {
    const all: Entry[] = [];
    let before: string | null = null;
    do {
      const page = await api(token, 'GET', `${path}?limit=200${before ? `&before=${before}` : ''}`);
      expect(page.status).toBe(200);
      all.push(...page.json.entries);
      before = page.json.next_before;
    } while (before);
    return all;
  }

  /**
   * The whole log once nothing more is being written to it (a job's outcome entry may land
   * just after the write that queued it).
   */
  async function settledLog(token: string, path: string): Promise<Entry[]> {
    let last = -1;
    let log: Entry[] = [];
    await expect
      .poll(
        async () => {
          const previous = last;
          log = await wholeLog(token, path);
          last = log.length;
          return last === previous;
        },
        { ...WAIT, interval: 400 },
      )
      .toBe(true);
    return log;
  }

  const noOverflow = async (page: Page) =>
    expect(
      (await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      )) as number,
    ).toBeLessThanOrEqual(0);

  /** A section reads within the viewport: nothing in it sticks out (tables scroll inside). */
  const fits = async (region: Locator, width: number) => {
    const box = await region.boundingBox();
    expect(box && box.x + box.width).toBeLessThanOrEqual(width);
    expect(
      await region.evaluate(
        (el: { scrollWidth: number; clientWidth: number }) => el.scrollWidth - el.clientWidth,
      ),
    ).toBeLessThanOrEqual(0);
  };

  it(
    "shows a family's entries page by page, newest first, and verifies the chain in the browser",
    async () => {
      const { context, page, problems, token } = await signedIn();
      try {
        const setup = await api(token, 'POST', '/setup/quick', {
          child_name: 'Ada',
          birth_date: '2015-06-01',
        });
        expect(setup.status).toBe(201);
        const familyId = setup.json.family.id as string;
        // Writes enough for more than one page: a second child, then renames.
        expect(
          (
            await api(token, 'POST', `/families/${familyId}/children`, {
              name: 'Ben',
              birth_date: '2019-03-02',
            })
          ).status,
        ).toBe(201);
        for (let i = 1; i <= PAGE_SIZE; i++) {
          expect(
            (await api(token, 'PATCH', `/families/${familyId}`, { name: `Ada's Family ${i}` }))
              .status,
          ).toBe(200);
        }
        const log = await settledLog(token, `/families/${familyId}/audit-log`);
        expect(log.length).toBeGreaterThan(PAGE_SIZE);
        expect(log[0]?.action).toBe('family.updated');

        await page.goto(`${t.baseUrl}/console/#/families/${familyId}`);
        const region = page.getByRole('region', { name: 'Audit log' });
        await region.getByRole('heading', { name: 'Audit log' }).waitFor(WAIT);
        const timeline = region.getByRole('list', { name: 'Audit entries' });
        const items = timeline.getByRole('listitem');
        await expect.poll(() => items.count(), WAIT).toBe(PAGE_SIZE);
        // Newest first, each with its actor (type · label), action, target and changes.
        for (const [i, entry] of log.slice(0, 3).entries()) {
          const text = (await items.nth(i).textContent()) ?? '';
          expect(text).toContain(entry.action);
          expect(text).toContain(`#${entry.seq}`);
          expect(text).toContain(`${entry.actor.type} · ${entry.actor.label}`);
          expect(text).toContain(`${entry.target.type} ${entry.target.id.slice(0, 8)}`);
          for (const field of Object.keys(entry.changes)) {
            expect(text).toContain(field);
          }
        }
        // The newest is the last rename, by the family's owner: its field named, its
        // personal value redacted.
        const newestText = (await items.first().textContent()) ?? '';
        expect(newestText).toContain('family.updated');
        expect(newestText).toContain(`${log[0]?.actor.type} · ${log[0]?.actor.label}`);
        expect(newestText).toContain('name[redacted]');

        // Older pages until the oldest kept entry: every entry once, in order.
        const older = region.getByRole('button', { name: 'Load older' });
        while ((await older.count()) > 0) {
          const shown = await items.count();
          await older.click();
          await expect.poll(() => items.count(), WAIT).toBeGreaterThan(shown);
        }
        await region.getByText('The oldest entry kept is shown.').waitFor(WAIT);
        const seqs = (await timeline.locator('.audit-entry-head .muted').allTextContents()).map(
          (s) => Number(s.slice(1)),
        );
        expect(seqs).toEqual(log.map((e) => e.seq));

        await region.getByRole('button', { name: 'Verify chain' }).click();
        const head = (await api(token, 'GET', `/families/${familyId}/audit-log/head`)).json;
        const status = region.getByRole('status');
        await expect.poll(() => status.textContent(), WAIT).toContain('Chain verified');
        const verdict = (await status.textContent()) ?? '';
        expect(verdict).toContain(`${log.length} entries recomputed`);
        expect(verdict).toContain(`head hash ${head.head_hash.slice(0, 12)}`);
        expect(verdict).toContain("verified with the steward's key");
        await region.screenshot({ path: `${SCRATCH}console-audit-log-all.png` });
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS * 2,
  );

  it(
    "offers an org's log to its owners and admins only, and verifies an org's chain",
    async () => {
      const { context, page, problems, token } = await signedIn();
      try {
        const me = await idOf(token);
        const own = await api(token, 'POST', '/developers/orgs', { name: 'Acme Org' });
        expect(own.status).toBe(201);
        const key = await api(token, 'POST', `/developers/orgs/${own.json.id}/keys`, {
          name: 'ci-key',
          environment: 'test',
          scopes: ['read:families'],
        });
        expect(key.status).toBe(201);
        // Orgs of another person: one where the user is a member (no log), one an admin.
        const other = await otherUser();
        const member = await api(other.token, 'POST', '/developers/orgs', { name: 'Beta Org' });
        const admin = await api(other.token, 'POST', '/developers/orgs', { name: 'Gamma Org' });
        for (const [org, role] of [
          [member, 'member'],
          [admin, 'admin'],
        ] as const) {
          const added = await api(other.token, 'POST', `/developers/orgs/${org.json.id}/members`, {
            user_id: me,
            role,
          });
          expect(added.status).toBe(201);
        }
        // The API's own rule: a member is refused the log.
        expect(
          (await api(token, 'GET', `/developers/orgs/${member.json.id}/audit-log`)).status,
        ).toBe(403);

        await page
          .getByRole('navigation', { name: 'Console' })
          .getByRole('link', { name: 'Audit log' })
          .click();
        await page.getByRole('heading', { name: 'Audit log' }).waitFor(WAIT);
        const select = page.getByLabel('Organization');
        await expect
          .poll(async () => (await select.locator('option').allTextContents()).sort(), WAIT)
          .toEqual(['Acme Org', 'Gamma Org']);

        // Acme's log, read as the console shows it.
        await select.selectOption({ label: 'Acme Org' });
        const acme = await settledLog(token, `/developers/orgs/${own.json.id}/audit-log`);
        const items = page.getByRole('list', { name: 'Audit entries' }).getByRole('listitem');
        await expect.poll(() => items.count(), WAIT).toBe(acme.length);
        expect(acme[0]?.action).toBe('api_key.created');
        const newest = (await items.first().textContent()) ?? '';
        expect(newest).toContain('api_key.created');
        expect(newest).toContain(`${acme[0]?.actor.type} · ${acme[0]?.actor.label}`);
        await page.getByRole('button', { name: 'Verify chain' }).click();
        await expect
          .poll(() => page.getByRole('status').textContent(), WAIT)
          .toContain(`Chain verified: ${acme.length} entr`);

        // Gamma's log, as its admin reads it.
        await select.selectOption({ label: 'Gamma Org' });
        const gamma = await settledLog(token, `/developers/orgs/${admin.json.id}/audit-log`);
        await expect
          .poll(() => items.first().textContent(), WAIT)
          .toContain(gamma[0]?.action ?? 'none');
        expect(await items.count()).toBe(gamma.length);
        // The view's URL reopens it.
        expect(new URL(page.url()).hash).toBe('#/audit-log');
        await page.reload();
        await page.getByLabel('Organization').waitFor(WAIT);
        await page.screenshot({ path: `${SCRATCH}console-audit-org.png`, fullPage: true });
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS * 2,
  );

  it(
    'offers an MCP token every family of the user, and a webhook only those it may change',
    async () => {
      const { context, page, problems, token } = await signedIn();
      try {
        const me = await idOf(token);
        expect(
          (
            await api(token, 'POST', '/setup/quick', {
              child_name: 'Ada',
              birth_date: '2015-06-01',
            })
          ).status,
        ).toBe(201);
        const other = await otherUser();
        const guarded = await api(other.token, 'POST', '/families', { name: 'Guarded Family' });
        const shared = await api(other.token, 'POST', '/families', { name: 'Co-parent Family' });
        for (const [family, role] of [
          [guarded, 'guardian'],
          [shared, 'parent'],
        ] as const) {
          expect(family.status).toBe(201);
          const added = await api(other.token, 'POST', `/families/${family.json.id}/members`, {
            user_id: me,
            role,
          });
          expect(added.status).toBe(201);
        }
        // The API's rules the pickers follow: a guardian's webhook is refused, its token not.
        expect(
          (
            await api(token, 'POST', '/webhooks', {
              family_id: guarded.json.id,
              url: 'http://127.0.0.1:9/hooks',
              events: ['*'],
            })
          ).status,
        ).toBe(403);

        await page.reload();
        const mcp = page.getByRole('region', { name: 'MCP tokens' });
        const hooks = page.getByRole('region', { name: 'Webhooks' });
        const options = async (region: typeof mcp) =>
          (await region.getByLabel('Family').locator('option').allTextContents()).sort();
        await expect.poll(() => options(hooks), WAIT).toEqual(["Ada's Family", 'Co-parent Family']);
        await expect
          .poll(() => options(mcp), WAIT)
          .toEqual(["Ada's Family", 'Co-parent Family', 'Guarded Family', 'Rivera Family (demo)']);

        // Each offered choice works: a token on the guardian's family, a webhook on the shared one.
        await mcp.getByLabel('Family').selectOption({ label: 'Guarded Family' });
        await mcp.getByLabel('Label').fill('guardian assistant');
        await mcp.getByRole('button', { name: 'Mint token' }).click();
        await page.getByRole('region', { name: 'New MCP token' }).waitFor(WAIT);
        await hooks.getByLabel('Family').selectOption({ label: 'Co-parent Family' });
        await hooks.getByLabel('Endpoint URL').fill('http://127.0.0.1:9/hooks');
        await hooks.getByRole('button', { name: 'Create webhook' }).click();
        await page.getByRole('region', { name: 'New webhook secret' }).waitFor(WAIT);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS * 2,
  );

  it(
    'reads at 390 px: a family page’s enforcement job and audit log, and the org log view',
    async () => {
      const { context, page, problems, token } = await signedIn({ width: 390, height: 844 });
      try {
        const setup = await api(token, 'POST', '/setup/quick', {
          child_name: 'Ada',
          birth_date: '2015-06-01',
        });
        const familyId = setup.json.family.id as string;
        expect((await api(token, 'POST', '/developers/orgs', { name: 'Acme Org' })).status).toBe(
          201,
        );
        for (const platform of ['nextdns', 'android']) {
          expect(
            (
              await api(token, 'POST', `/families/${familyId}/connections`, {
                platform_id: platform,
              })
            ).status,
          ).toBe(201);
        }
        await api(token, 'POST', '/sandbox/platforms/android/fail', {
          family_id: familyId,
          times: 1,
          message: 'a long partner message that must wrap inside its cell at 390 px wide',
        });
        expect(
          (await api(token, 'POST', `/children/${setup.json.child.id}/enforce`, {})).status,
        ).toBe(202);
        await page.goto(`${t.baseUrl}/console/#/families/${familyId}`);
        const enforcement = page.getByRole('region', { name: 'Enforcement' });
        const job = enforcement.getByRole('listitem').first();
        await expect.poll(() => job.textContent(), WAIT).toContain('partial');
        await job.getByRole('button', { name: /^Open the job of/ }).click();
        await job.getByRole('table').waitFor(WAIT);
        await fits(enforcement, 390);
        const region = page.getByRole('region', { name: 'Audit log' });
        await region.getByRole('list', { name: 'Audit entries' }).waitFor(WAIT);
        await region.getByRole('button', { name: 'Verify chain' }).click();
        await expect
          .poll(() => region.getByRole('status').textContent(), WAIT)
          .toContain('Chain verified');
        await fits(region, 390);
        await region.screenshot({ path: `${SCRATCH}console-audit-log-390.png` });
        await enforcement.screenshot({ path: `${SCRATCH}console-enforcement-390.png` });
        // The committed picture: the same family at a desk's width.
        await page.setViewportSize({ width: 1280, height: 900 });
        await region.screenshot({ path: `${SCREENSHOTS}console-audit-log.png` });
        await enforcement.screenshot({ path: `${SCRATCH}console-enforcement.png` });
        await page.goto(`${t.baseUrl}/console/#/audit-log`);
        await page.getByRole('list', { name: 'Audit entries' }).waitFor(WAIT);
        await noOverflow(page);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS * 2,
  );
});
