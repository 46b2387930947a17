// Bounded memory: a flood of 100 000 distinct sandbox sessions from
// 100 000 distinct client IPs must not grow the process without bound. Every per-caller
// structure it touches is capped (docs/decisions.md, "Bounded memory"): the rate-limit
// buckets (LRU, 100 000), the session -> user cache and the session last-seen batch (both at
// most SANDBOX_MAX_SESSIONS), and the sessions themselves (the cap, with eviction).
//
// The requests go over real sockets to the listening app (distinct addresses through
// X-Forwarded-For behind TRUST_PROXY), so the event loop turns as in production; a loop of
// in-process inject() calls on the embedded database never reaches the loop's check phase
// and piles up setImmediate callbacks that a server never would. The heap is read after a
// forced full collection, so it counts what is retained, not garbage awaiting a collector.
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVICTION_GRACE_MS } from '../src/modules/sandbox-sessions/service.js';
import { buildTestApp, type TestApp } from './app.js';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

const SESSIONS = 100_000;
const CAP = 300;
const IN_FLIGHT = 32;
const MIB = 1024 * 1024;
/**
 * The stated bound on what the flood may leave retained. The 100 000 rate-limit buckets
 * (one timestamp each) are the bulk: measured at ~25 MiB on Node 20; the bound leaves room
 * for V8's layout choices and nothing more. Unbounded growth (a map per session name, a log
 * line kept per request) exceeds it several times over.
 */
const HEAP_BOUND_MIB = 64;

function retainedHeap(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}

/** A distinct IPv4 address per index, outside loopback. */
function clientIp(i: number): string {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
}

// Run against PostgreSQL (the CI's PostgreSQL run; docs/decisions.md "Why the flood test runs
// on PostgreSQL only"): the database is then out of process, so the
// heap measured is Haven's alone, and the flood takes ~3 minutes. On the embedded engine each
// request also runs WASM SQL in this process (~5 ms a request on this machine's CI): the same
// flood would add ~8 minutes to every `npm test`, for the same in-process structures.
describe.runIf(Boolean(process.env.DATABASE_URL))(
  'memory under a flood of distinct sessions and client IPs',
  () => {
    let t: TestApp;
    let port: number;
    const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
    beforeAll(async () => {
      t = await buildTestApp({
        env: { LOG_LEVEL: 'warn', SANDBOX_MAX_SESSIONS: String(CAP), TRUST_PROXY: 'true' },
      });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      port = (t.app.server.address() as AddressInfo).port;
    });
    afterAll(async () => {
      agent.destroy();
      await t.close();
    });

    /** GET /api/v1/families as an anonymous sandbox caller: status and parsed body. */
    const listFamilies = (session: string, ip: string) =>
      new Promise<{ statusCode: number; body: string; json(): unknown }>((resolve, reject) => {
        const req = request(
          {
            agent,
            port,
            host: '127.0.0.1',
            path: '/api/v1/families',
            headers: { 'x-sandbox-session': session, 'x-forwarded-for': ip },
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => {
              body += chunk;
            });
            res.on('end', () =>
              resolve({ statusCode: res.statusCode ?? 0, body, json: () => JSON.parse(body) }),
            );
          },
        );
        req.on('error', reject);
        req.end();
      });

    it('keeps the heap within the stated bound, evicting sessions past the cap', async () => {
      // Churn first: three times the cap in real sessions, three seconds apart, so that the
      // oldest are evicted (with their data) to make room for new ones.
      for (let i = 0; i < CAP * 3; i++) {
        t.clock.advance(3_000);
        const res = await listFamilies(`churn-${i}`, clientIp(i));
        expect(res.statusCode, res.body).toBe(200);
      }
      const before = retainedHeap();

      // Then the flood, at a frozen clock: the first new names take the place of sessions quiet
      // for longer than the grace; after that none may be evicted, and each new name is
      // refused (503 in the envelope) while the existing sessions keep working.
      const statuses = new Map<number, number>();
      let next = 0;
      const worker = async () => {
        while (next < SESSIONS) {
          const i = next++;
          const res = await listFamilies(`flood-${i}`, clientIp(CAP * 3 + i));
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          if (res.statusCode !== 200 && res.statusCode !== 503) {
            // The server's own account of it (the answer says only "internal error").
            const errors = t.logs
              .filter((line) => Number(line.level) >= 50)
              .slice(-3)
              .map((line) => JSON.stringify(line).slice(0, 2000));
            throw new Error(
              `flood request ${i}: ${res.statusCode} ${res.body}\n${errors.join('\n')}`,
            );
          }
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
      const after = retainedHeap();
      const grownMiB = (after - before) / MIB;
      console.log(
        `bounded-memory: ${SESSIONS} sessions from ${SESSIONS} IPs; statuses ${JSON.stringify(
          Object.fromEntries(statuses),
        )}; heap ${(before / MIB).toFixed(1)} -> ${(after / MIB).toFixed(1)} MiB (retained +${grownMiB.toFixed(1)} MiB, bound ${HEAP_BOUND_MIB} MiB); rss ${(process.memoryUsage().rss / MIB).toFixed(0)} MiB`,
      );

      expect(grownMiB).toBeLessThan(HEAP_BOUND_MIB);
      // The cap's sessions were seen three seconds apart; those quiet for longer than the
      // grace (strictly: not the one seen exactly a grace ago) made room for new names.
      const evictable = CAP - EVICTION_GRACE_MS / 3_000 - 1;
      expect(statuses.get(200)).toBe(evictable);
      expect(statuses.get(503)).toBe(SESSIONS - evictable);
      const refused = await listFamilies('flood-late', clientIp(1));
      expect(refused.json()).toMatchObject({
        code: 503,
        message: 'sandbox session limit reached: reuse an X-Sandbox-Session value or retry later',
      });
      // The sessions that exist kept working all along.
      expect((await listFamilies(`churn-${CAP * 3 - 1}`, clientIp(2))).statusCode).toBe(200);

      // Once the quietest session has been quiet for the grace, a new name gets in again.
      t.clock.advance(11 * 60_000);
      expect((await listFamilies('after-the-flood', clientIp(3))).statusCode).toBe(200);
    }, 600_000);
  },
);
