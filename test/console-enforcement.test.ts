// The console's Enforcement section (CONTRACT.md §10.3) in chromium against a real listening
// server: a job made through the API (a quick setup, two sandbox connections, one armed to
// fail) is listed on the family's page; opened, it shows one row per platform with the
// job's own status, counts and the partner's error text. A job queued while the page is
// open, and held pending (the API runs no workers here; the test starts and stops them),
// turns completed on screen without a reload, and is no longer asked for once finished.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeServices, createServices } from '../src/modules/wiring.js';
import { createTelemetry } from '../src/telemetry/telemetry.js';
import { buildListeningTestApp, type TestApp } from './app.js';
import { BROWSER_TIMEOUT_MS, launchChromium, requireChromium, watchedPage } from './browser.js';

const enabled = requireChromium('console-enforcement.test.ts');
const WAIT = { timeout: BROWSER_TIMEOUT_MS / 3 };

interface Job {
  id: string;
  status: string;
  results: Array<{
    platform_id: string;
    status: string;
    rules_applied: number;
    rules_skipped: number;
    rules_failed: number;
    error_message: string | null;
  }>;
}

describe.runIf(enabled)('the console: enforcement jobs', () => {
  let t: TestApp & { baseUrl: string };
  let browser: Browser | undefined;
  let stopWorkers: (() => Promise<void>) | undefined;

  /**
   * Job workers on the app's database, as `npm run worker` runs them beside an API started
   * with WORKERS=off: while none runs, a queued job stays pending.
   */
  async function startWorkers(): Promise<void> {
    const services = await createServices(
      { ...t.config, workers: 'inline' },
      {
        db: t.database.handle.db,
        clock: t.clock,
        notifications: t.database.handle.notifications,
        telemetry: createTelemetry(t.config),
      },
      t.app.log,
      t.database.handle.backend === 'postgres',
    );
    await services.jobs.start();
    stopWorkers = async () => {
      stopWorkers = undefined;
      await closeServices(services);
    };
  }

  beforeAll(async () => {
    t = await buildListeningTestApp({ env: { WORKERS: 'off' } });
    await startWorkers();
    browser = await launchChromium();
  }, BROWSER_TIMEOUT_MS);
  afterAll(async () => {
    await browser?.close();
    await stopWorkers?.();
    await t?.close();
  }, BROWSER_TIMEOUT_MS);

  const tokenOf = (page: Page) =>
    page.evaluate("sessionStorage.getItem('haven.console.token')") as Promise<string>;

  async function api(token: string, method: string, path: string, body?: unknown) {
    const res = await fetch(`${t.baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  async function finished(token: string, jobId: string): Promise<Job> {
    let job: Job | undefined;
    await expect
      .poll(async () => {
        job = (await api(token, 'GET', `/enforcement/jobs/${jobId}`)).json as unknown as Job;
        return job.status;
      }, WAIT)
      .not.toMatch(/^(pending|running)$/);
    return job as Job;
  }

  it(
    'lists a family’s jobs, opens one into a row per platform with counts and the partner’s error, and follows a running job to its end',
    async () => {
      if (!browser) {
        throw new Error('the browser did not start');
      }
      const { context, page, problems } = await watchedPage(browser, new URL(t.baseUrl).origin, {
        viewport: { width: 1280, height: 900 },
      });
      const jobReads: string[] = [];
      page.on('request', (request) => {
        if (/\/api\/v1\/enforcement\/jobs\//.test(request.url())) {
          jobReads.push(request.url());
        }
      });
      try {
        await page.goto(`${t.baseUrl}/console/`);
        await page.getByRole('button', { name: 'Sign in to the sandbox' }).click();
        await page.getByRole('heading', { name: 'Organizations' }).waitFor(WAIT);
        const token = await tokenOf(page);

        // A family with two platforms; the next run on android fails with the partner's words.
        const setup = await api(token, 'POST', '/setup/quick', {
          child_name: 'Ada',
          birth_date: '2015-06-01',
        });
        expect(setup.status).toBe(201);
        const familyId = (setup.json.family as { id: string }).id;
        const childId = (setup.json.child as { id: string }).id;
        for (const platform of ['nextdns', 'android']) {
          const connected = await api(token, 'POST', `/families/${familyId}/connections`, {
            platform_id: platform,
          });
          expect(connected.status).toBe(201);
        }
        const armed = await api(token, 'POST', '/sandbox/platforms/android/fail', {
          family_id: familyId,
          times: 1,
          message: 'the partner refused the profile',
        });
        expect(armed.status).toBe(201);
        // The test clock stands still unless moved: each job gets its own minute.
        t.clock.advance(60_000);
        const queued = await api(token, 'POST', `/children/${childId}/enforce`, {});
        expect(queued.status).toBe(202);
        const job = await finished(token, queued.json.id as string);
        expect(job.status).toBe('partial');
        expect(job.results).toHaveLength(2);

        await page.goto(`${t.baseUrl}/console/#/families/${familyId}`);
        const section = page.getByRole('region', { name: 'Enforcement' });
        await section.getByRole('heading', { name: 'Enforcement' }).waitFor(WAIT);
        const jobs = section.getByRole('list', { name: 'Enforcement jobs' });
        const newest = jobs.getByRole('listitem').first();
        await expect.poll(() => newest.textContent(), WAIT).toContain('partial');
        expect(await newest.textContent()).toContain('manual');
        expect(await newest.textContent()).toContain('Ada');

        await newest.getByRole('button', { name: /^Open the job of/ }).click();
        await newest.getByText(`Job ${job.id.slice(0, 8)}`).waitFor(WAIT);
        const table = newest.getByRole('table', { name: /^Platforms of the job of/ });
        const rows = table.getByRole('row');
        await expect.poll(() => rows.count(), WAIT).toBe(1 + job.results.length);
        const catalog = (await api(token, 'GET', '/platforms')).json as unknown as Array<{
          platform_id: string;
          name: string;
        }>;
        const names = new Map(catalog.map((p) => [p.platform_id, p.name]));
        for (const result of job.results) {
          const row = rows.filter({ hasText: names.get(result.platform_id) ?? result.platform_id });
          const cells = await row.getByRole('cell').allTextContents();
          expect(cells.slice(1)).toEqual([
            result.status,
            String(result.rules_applied),
            String(result.rules_skipped),
            String(result.rules_failed),
            result.error_message ?? '—',
          ]);
        }
        const failed = job.results.find((r) => r.platform_id === 'android');
        expect(failed?.status).toBe('failed');
        expect(failed?.error_message).toContain('the partner refused the profile');
        expect(job.results.find((r) => r.platform_id === 'nextdns')?.status).toBe('success');
        // A finished job is not asked for again.
        expect(jobReads).toEqual([]);

        // No worker: the next job stays pending while the page shows it.
        await stopWorkers?.();
        t.clock.advance(60_000);
        const held = await api(token, 'POST', `/children/${childId}/enforce`, {});
        expect(held.status).toBe(202);
        const heldId = held.json.id as string;
        await section.getByRole('button', { name: 'Refresh jobs' }).click();
        const running = jobs.getByRole('listitem').first();
        await expect.poll(() => running.textContent(), WAIT).toContain('pending');
        await running.getByRole('button', { name: /^Open the job of/ }).click();
        await running.getByText(`Job ${heldId.slice(0, 8)}`).waitFor(WAIT);
        await running.getByText('The platforms are listed once the job has run.').waitFor(WAIT);
        // Asked for again every second while it is not finished.
        await expect.poll(() => jobReads.length, WAIT).toBeGreaterThan(1);
        expect(jobReads.every((url) => url.endsWith(`/enforcement/jobs/${heldId}`))).toBe(true);

        // A worker takes it: the page turns it completed by itself, no reload, no click.
        const navigations: string[] = [];
        page.on('framenavigated', (frame) => navigations.push(frame.url()));
        await startWorkers();
        await expect.poll(() => running.textContent(), WAIT).toContain('completed');
        const heldRows = running.getByRole('table', { name: /^Platforms of the job of/ });
        await expect.poll(() => heldRows.getByRole('row').count(), WAIT).toBe(3);
        expect(await heldRows.textContent()).not.toContain('failed');
        expect(navigations).toEqual([]);
        // Finished: no more reads of it.
        const reads = jobReads.length;
        await page.waitForTimeout(2500);
        expect(jobReads.length).toBe(reads);
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TIMEOUT_MS * 2,
  );
});
