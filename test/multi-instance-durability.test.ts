// Durability across instances (CONTRACT.md §5 Idempotency-Key, §8 enforcement and webhooks,
// §4 shared rate limits): three API processes (WORKERS=off) and two `npm run worker`
// processes on one PostgreSQL database and one Redis, behind a round-robin balancer that
// hides no failure. Twenty clients write for a while, each write under its own
// Idempotency-Key and retried with the same key and body until it is answered; 40 % of the
// way through, one API process and one worker are killed with SIGKILL. Then, within 60 s of
// the load's end:
// 1. no acknowledged write is lost;
// 2. no write landed twice (each key's payload exists once);
// 3. every enforcement job is finished, and announced once (one enforcement.* message);
// 4. every committed change's event reached the webhook under exactly one `webhook-id`
//    (redeliveries of one message allowed), signed the Standard Webhooks way;
// 5. the three instances count an org's requests in one bucket (Redis).
// Observed through GET /metrics, scraped from every process (APIs and workers) all along:
// 6. each surviving API counted exactly the requests the balancer sent it (scrapes and probes
//    aside; the killed one's counters die with it);
// 7. after the kill, a wave of writes with nothing else in flight: the live workers' job and
//    delivery counters grow by what the database shows completed and attempted, and the
//    deliveries that succeeded are the ones the receiver got;
// 8. an API stopped with SIGTERM (SHUTDOWN_DELAY_SECONDS) answers /health/ready 503 while the
//    balancer's requests are still served and counted, then exits 0.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '../src/jobs/queues.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import {
  balancedRequests,
  countedWork,
  jobsPending,
  MetricsWatch,
  scrapeProcess,
  type WatchedInstance,
  type WorkCounts,
  workCounts,
  workDelta,
} from './instance-metrics.js';
import { RoundRobinBalancer } from './round-robin-balancer.js';
import {
  killHard,
  type RunningScript,
  runScript,
  WORKER_RUNNING,
  waitForLine,
} from './server-process.js';
import { eventually } from './tcp-proxy.js';
import { WebhookReceiver } from './webhook-receiver.js';

const redisUrl = process.env.REDIS_URL ?? '';
const shared = Boolean(process.env.DATABASE_URL && redisUrl);

const APIS = 3;
const WORKERS = 2;
const CLIENTS = 20;
/** How long the clients keep starting new writes. */
const LOAD_MS = 15_000;
/**
 * When, into the load, one API process and one worker are killed: from 40 % of the way, at the
 * first moment the API has KILL_IN_FLIGHT requests in hand (so the kill cuts writes off midway),
 * and at 50 % whatever it has.
 */
const KILL_FROM_MS = Math.round(LOAD_MS * 0.4);
const KILL_BY_MS = Math.round(LOAD_MS * 0.5);
const KILL_IN_FLIGHT = 5;
/** Writes of each kind that must be acknowledged for the run to prove anything. */
const MIN_ACKNOWLEDGED = 10;
/** After the load: retries end and everything must have settled by then. */
const SETTLE_MS = 60_000;
/** One request's own bound (a request that hangs is retried with its key). */
const REQUEST_TIMEOUT_MS = 20_000;
/** A fresh org's bucket (CONTRACT.md §4: free tier, 100 a minute) and the burst sent at it. */
const ORG_LIMIT = 100;
const BURST = 150;
const TERMINAL = new Set(['completed', 'partial', 'failed']);
/** The runner's bound, for a hang only: the test's own waits have deadlines of their own. */
const PROCESS_TIMEOUT_MS = 300_000;
/** How often every process's /metrics is scraped while the run goes on. */
const SCRAPE_EVERY_MS = 1_000;
/** The APIs' SHUTDOWN_DELAY_SECONDS: not ready, still serving, before the drain. */
const STOP_DELAY_SECONDS = 5;
/** The queues whose work the workers' counters are set against the database. */
const WATCHED_QUEUES: string[] = [QUEUES.enforcement, QUEUES.webhookDelivery];

/** This run's names: rate-limit buckets and sandbox sessions in Redis outlive a run. */
const RUN = randomBytes(4).toString('hex');
const SESSION = `multi-instance-${RUN}`;
const RULE = 'time_daily_limit';

/**
 * A new client address for every request (TRUST_PROXY): anonymous sandbox callers are
 * limited per address (100 a minute), and the load makes far more requests than that. The
 * sandbox session, not the address, says whose data it is. 100.64.0.0/10, a block no other
 * test uses.
 */
const ADDRESS_BLOCK = 64 + Math.floor(Math.random() * 64);
let addresses = 0;
function nextAddress(): string {
  addresses = (addresses + 1) % 65_536;
  return `100.${ADDRESS_BLOCK}.${addresses >> 8}.${addresses & 255}`;
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function codeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? (error as { name?: string }).name ?? String(error);
}

type Kind = 'child' | 'rule' | 'enforce';

interface Write {
  client: number;
  n: number;
  kind: Kind;
  key: string;
  method: 'POST' | 'PUT';
  path: string;
  body: string;
  /** What it makes, to find among what landed: a child's name, a rule's value. */
  identity: string;
  /** A rule write's daily_minutes. */
  value?: number;
  attempts: number;
  /** Why attempts were retried: status or network error → how often. */
  retried: Record<string, number>;
  acknowledged: boolean;
  /** The final answer (status and body start) or why the client gave up. */
  final: string;
  /** The acknowledged answer's id (child, job), and the answer. */
  id?: string;
  answer?: string;
  replayed: boolean;
}

interface Client {
  index: number;
  childId: string;
  policyId: string;
  /** The policy's version once setup was done: every rule write since raises it by one. */
  initialVersion: number;
  writes: Write[];
}

interface Received {
  webhookId: string;
  type: string;
  data: Record<string, unknown>;
  body: string;
  verified: boolean;
}

/** A count and a few examples: what a failing assertion prints. */
interface Finding {
  count: number;
  examples: string[];
}

function finding(items: string[]): Finding {
  return { count: items.length, examples: items.slice(0, 6) };
}

const NONE: Finding = { count: 0, examples: [] };

describe.skipIf(!shared)(
  shared
    ? 'three API instances and two workers behind a balancer, one of each killed mid-load'
    : 'multi-instance durability (skipped: needs PostgreSQL and Redis, DATABASE_URL and REDIS_URL)',
  () => {
    let database: TestDatabase | undefined;
    const apis: RunningScript[] = [];
    const urls = new Map<RunningScript, string>();
    const workers: RunningScript[] = [];
    let balancer: RoundRobinBalancer | undefined;
    const receiver = new WebhookReceiver();
    /** How long starting the processes took (s). */
    let startup = '';

    beforeAll(async () => {
      const startedAt = Date.now();
      await receiver.start();
      database = await createTestDatabase();
      const url = database.url as string;
      const apiEnv = {
        DATABASE_URL: url,
        REDIS_URL: redisUrl,
        WORKERS: 'off',
        TRUST_PROXY: 'true',
        SHUTDOWN_DELAY_SECONDS: String(STOP_DELAY_SECONDS),
      };
      const workerEnv = { DATABASE_URL: url, REDIS_URL: redisUrl, LOG_LEVEL: 'info' };
      // Started together; each is kept as soon as it runs, so afterAll stops it whatever fails.
      const started = await Promise.allSettled([
        ...Array.from({ length: APIS }, async () => {
          // startServer's way, the process kept before it listens (afterAll stops it).
          const api = runScript('main', { PORT: '0', LOG_LEVEL: 'info', ...apiEnv });
          apis.push(api);
          const [, listening] = await waitForLine(
            api,
            /Haven listening on (http:\/\/127\.0\.0\.1:\d+)/,
          );
          urls.set(api, listening as string);
        }),
        ...Array.from({ length: WORKERS }, async () => {
          const worker = runScript('worker', workerEnv);
          workers.push(worker);
          const [, listening] = await waitForLine(worker, WORKER_RUNNING);
          urls.set(worker, listening as string);
          return worker;
        }),
      ]);
      const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) {
        throw failed.reason;
      }
      balancer = new RoundRobinBalancer(apis.map((api) => urls.get(api) as string));
      await balancer.start();
      startup = ((Date.now() - startedAt) / 1000).toFixed(1);
    }, PROCESS_TIMEOUT_MS);

    afterAll(async () => {
      await Promise.all([...apis, ...workers].map((running) => killHard(running)));
      await balancer?.stop();
      await receiver.stop();
      await database?.drop();
    });

    it(
      'loses no acknowledged write, makes none twice, runs every job once and delivers every event under one webhook-id',
      async () => {
        const lb = balancer as RoundRobinBalancer;
        const base = lb.url;

        /** A write under its key, retried with the same key and body until answered. */
        async function settle(write: Write, deadline: number): Promise<void> {
          for (;;) {
            write.attempts++;
            let why: string;
            try {
              const response = await fetch(`${base}${write.path}`, {
                method: write.method,
                headers: {
                  'content-type': 'application/json',
                  'x-sandbox-session': SESSION,
                  'x-forwarded-for': nextAddress(),
                  'idempotency-key': write.key,
                },
                body: write.body,
                signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
              });
              const text = await response.text();
              if (response.status >= 200 && response.status < 300) {
                write.acknowledged = true;
                write.final = String(response.status);
                write.replayed = response.headers.get('ocss-replay') === 'original';
                write.id = (JSON.parse(text) as { id?: string }).id;
                write.answer = text;
                return;
              }
              // 409: the key's first request is still in flight (or its claim is being reset);
              // only a different body under the same key is a final answer.
              const inProgress = response.status === 409 && !/different/i.test(text);
              if (response.status < 500 && response.status !== 429 && !inProgress) {
                write.final = `${response.status} ${text.slice(0, 160)}`;
                return;
              }
              why = inProgress ? '409 in progress' : String(response.status);
            } catch (error) {
              why = codeOf(error);
            }
            write.retried[why] = (write.retried[why] ?? 0) + 1;
            if (Date.now() >= deadline) {
              write.final = `gave up after ${write.attempts} attempts (last: ${why})`;
              return;
            }
            await delay(
              Math.min(1_000, 25 * 2 ** Math.min(write.attempts, 6)) * (0.5 + Math.random()),
            );
          }
        }

        function newWrite(
          client: number,
          n: number,
          kind: Kind,
          method: 'POST' | 'PUT',
          path: string,
          body: unknown,
          identity: string,
        ): Write {
          return {
            client,
            n,
            kind,
            key: `${RUN}-${client}-${n}-${kind}`,
            method,
            path,
            body: JSON.stringify(body),
            identity,
            attempts: 0,
            retried: {},
            acknowledged: false,
            final: 'not sent',
            replayed: false,
          };
        }

        /** A setup write: it must be acknowledged (nothing is killed yet). */
        async function setupWrite(
          name: string,
          method: 'POST' | 'PUT',
          path: string,
          body: unknown,
        ) {
          const write = newWrite(-1, 0, 'child', method, path, body, name);
          write.key = `${RUN}-setup-${name}`;
          await settle(write, Date.now() + 30_000);
          if (!write.acknowledged) {
            throw new Error(`setup ${name}: ${write.final}`);
          }
          return write;
        }

        /** A read through the balancer, retried on a network error or 5xx; must be 200. */
        async function read<T>(path: string): Promise<T> {
          let last = '';
          for (let attempt = 1; attempt <= 5; attempt++) {
            let status: number;
            let text: string;
            try {
              const response = await fetch(`${base}${path}`, {
                headers: { 'x-sandbox-session': SESSION, 'x-forwarded-for': nextAddress() },
                signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
              });
              status = response.status;
              text = await response.text();
            } catch (error) {
              last = codeOf(error);
              await delay(100 * attempt);
              continue;
            }
            if (status === 200) {
              return JSON.parse(text) as T;
            }
            last = `${status} ${text.slice(0, 200)}`;
            if (status < 500) {
              break;
            }
            await delay(100 * attempt);
          }
          throw new Error(`GET ${path}: ${last}`);
        }

        // Every process scraped from before the first request to the end of the settle.
        const urlOf = (running: RunningScript) => urls.get(running) as string;
        const requestsAtStart = new Map<RunningScript, number>();
        for (const api of apis) {
          requestsAtStart.set(api, balancedRequests(await scrapeProcess(urlOf(api))));
        }
        const answeredAtStart = lb.upstreams.map((upstream) => upstream.answered);
        const watch = new MetricsWatch([...apis, ...workers].map(urlOf));
        watch.start(SCRAPE_EVERY_MS);

        // ---- Setup, through the balancer, all three instances live. ----
        const setupStart = Date.now();
        // 5. The rate limit: a fresh org's key, a burst of BURST requests across the instances.
        const minted = await fetch(`${base}/api/v1/sandbox/session-token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': nextAddress() },
          body: '{}',
        });
        expect(minted.status).toBe(201);
        const session = {
          authorization: `Bearer ${((await minted.json()) as { access_token: string }).access_token}`,
        };
        async function asDeveloper<T>(path: string, body: unknown): Promise<T> {
          const response = await fetch(`${base}${path}`, {
            method: 'POST',
            headers: { ...session, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          const text = await response.text();
          expect(response.status, text).toBe(201);
          return JSON.parse(text) as T;
        }
        const org = await asDeveloper<{ id: string }>('/api/v1/developers/orgs', {
          name: `org ${RUN}`,
        });
        const apiKey = await asDeveloper<{ key: string }>(
          `/api/v1/developers/orgs/${org.id}/keys`,
          {
            name: 'burst',
            environment: 'test',
          },
        );
        const burst = { allowed: 0, limited: 0, other: [] as string[], upstreamsAnswering: 0 };
        const answeredBefore = lb.upstreams.map((upstream) => upstream.answered);
        let sent = 0;
        await Promise.all(
          Array.from({ length: 10 }, async () => {
            while (sent < BURST) {
              sent++;
              const response = await fetch(`${base}/api/v1/developer/families`, {
                headers: { authorization: `Bearer ${apiKey.key}` },
              });
              await response.arrayBuffer();
              if (response.status === 200) {
                burst.allowed++;
              } else if (response.status === 429) {
                burst.limited++;
              } else {
                burst.other.push(String(response.status));
              }
            }
          }),
        );
        burst.upstreamsAnswering = lb.upstreams.filter(
          (upstream, i) => upstream.answered > (answeredBefore[i] ?? 0),
        ).length;

        // The family, its webhook (every event) and a sandbox platform needing no partner.
        const family = (
          await setupWrite('family', 'POST', '/api/v1/families', { name: `family ${RUN}` })
        ).id as string;
        const hook = await setupWrite('webhook', 'POST', '/api/v1/webhooks', {
          family_id: family,
          url: receiver.url,
          events: ['*'],
        });
        const secret = (JSON.parse(hook.answer ?? '{}') as { secret: string }).secret;
        await setupWrite('connection', 'POST', `/api/v1/families/${family}/connections`, {
          platform_id: 'nextdns',
        });
        // Each client: a child of the family with an active policy (quick setup into it).
        const clients: Client[] = await Promise.all(
          Array.from({ length: CLIENTS }, async (_, index) => {
            const setup = await setupWrite(`kid-${index}`, 'POST', '/api/v1/setup/quick', {
              child_name: `kid ${index} ${RUN}`,
              birth_date: '2014-03-05',
              family_id: family,
            });
            const answer = JSON.parse(setup.answer ?? '{}') as {
              child: { id: string };
              policy: { id: string };
            };
            const policy = await read<{ version: number }>(`/api/v1/policies/${answer.policy.id}`);
            return {
              index,
              childId: answer.child.id,
              policyId: answer.policy.id,
              initialVersion: policy.version,
              writes: [],
            };
          }),
        );

        // ---- The load. ----
        const loadStart = Date.now();
        const loadEnd = loadStart + LOAD_MS;
        const deadline = loadEnd + SETTLE_MS;
        const [killedApi, killedWorker] = [apis[1] as RunningScript, workers[0] as RunningScript];
        const victim = lb.upstreams[1] as (typeof lb.upstreams)[number];
        const kill = { at: 0, inFlight: 0 };
        const killing = (async () => {
          await delay(KILL_FROM_MS);
          while (victim.inFlight < KILL_IN_FLIGHT && Date.now() < loadStart + KILL_BY_MS) {
            await delay(2);
          }
          kill.at = Date.now() - loadStart;
          kill.inFlight = victim.inFlight;
          await Promise.all([killHard(killedApi), killHard(killedWorker)]);
        })();

        function plan(client: Client, n: number): Write {
          const kind: Kind = (['child', 'rule', 'enforce'] as const)[
            (n + client.index) % 3
          ] as Kind;
          switch (kind) {
            case 'child': {
              const name = `c${client.index}-w${n} ${RUN}`;
              return newWrite(
                client.index,
                n,
                kind,
                'POST',
                `/api/v1/families/${family}/children`,
                { name, birth_date: '2016-04-05' },
                name,
              );
            }
            case 'rule': {
              // Each rule write of a client sets a value none of its others sets.
              const value = client.writes.filter((w) => w.kind === 'rule').length;
              const write = newWrite(
                client.index,
                n,
                kind,
                'PUT',
                `/api/v1/policies/${client.policyId}/rules/${RULE}`,
                { enabled: true, config: { daily_minutes: value } },
                `${client.policyId} ${RULE}=${value}`,
              );
              write.value = value;
              return write;
            }
            case 'enforce':
              return newWrite(
                client.index,
                n,
                kind,
                'POST',
                `/api/v1/children/${client.childId}/enforce`,
                {},
                `enforce ${client.childId}`,
              );
          }
        }

        await Promise.all(
          clients.map(async (client) => {
            for (let n = 0; Date.now() < loadEnd; n++) {
              const write = plan(client, n);
              client.writes.push(write);
              await settle(write, deadline);
            }
          }),
        );
        const writesDoneAt = Date.now();
        await killing;
        const writes = clients.flatMap((client) => client.writes);

        // ---- What landed, polled until it all holds or the deadline passes. ----
        const verifier = new Webhook(secret);
        const parsed = new Map<number, Received>();
        function received(): Received[] {
          // Parsed and verified once each (the receiver only appends).
          for (let i = parsed.size; i < receiver.received.length; i++) {
            const request = receiver.received[i] as (typeof receiver.received)[number];
            const headers = {
              'webhook-id': String(request.headers['webhook-id'] ?? ''),
              'webhook-timestamp': String(request.headers['webhook-timestamp'] ?? ''),
              'webhook-signature': String(request.headers['webhook-signature'] ?? ''),
            };
            let verified = true;
            try {
              verifier.verify(request.body, headers);
            } catch {
              verified = false;
            }
            const body = JSON.parse(request.body) as {
              type: string;
              data: Record<string, unknown>;
            };
            parsed.set(i, {
              webhookId: headers['webhook-id'],
              type: body.type,
              data: body.data,
              body: request.body,
              verified,
            });
          }
          return [...parsed.values()];
        }

        async function examine() {
          const children = await read<Array<{ id: string; name: string }>>(
            `/api/v1/families/${family}/children`,
          );
          const jobs = new Map<
            string,
            { id: string; child_id: string; status: string; trigger_type: string }
          >();
          for (let offset = 0; ; offset += 100) {
            const page = await read<
              Array<{ id: string; child_id: string; status: string; trigger_type: string }>
            >(`/api/v1/enforce/history?limit=100&offset=${offset}`);
            for (const job of page) {
              jobs.set(job.id, job);
            }
            if (page.length < 100) {
              break;
            }
          }
          const childIds = new Set(children.map((child) => child.id));
          const familyJobs = [...jobs.values()].filter((job) => childIds.has(job.child_id));
          const policies = await Promise.all(
            clients.map(async (client) => {
              const [policy, rules] = await Promise.all([
                read<{ version: number }>(`/api/v1/policies/${client.policyId}`),
                read<Array<{ category: string; config: { daily_minutes?: number } }>>(
                  `/api/v1/policies/${client.policyId}/rules`,
                ),
              ]);
              return {
                version: policy.version,
                value: rules.find((rule) => rule.category === RULE)?.config.daily_minutes,
              };
            }),
          );
          const messages = received();

          // Distinct webhook-ids per thing an event is about.
          const idsOf = new Map<string, Set<string>>();
          for (const message of messages) {
            const about =
              message.type === 'policy.updated'
                ? `policy.updated ${message.data.id} v${message.data.version}`
                : message.type.startsWith('enforcement.')
                  ? `enforcement ${message.data.id}`
                  : `${message.type} ${message.data.id}`;
            let ids = idsOf.get(about);
            if (!ids) {
              ids = new Set();
              idsOf.set(about, ids);
            }
            ids.add(message.webhookId);
          }
          const once = (
            about: string,
            what: string,
            into: { missing: string[]; repeated: string[] },
          ) => {
            const count = idsOf.get(about)?.size ?? 0;
            if (count === 0) {
              into.missing.push(what);
            } else if (count > 1) {
              into.repeated.push(`${what}: ${count} webhook-ids`);
            }
          };

          const lost: string[] = [];
          const duplicated: string[] = [];
          const landedUnacknowledged: string[] = [];
          const namesCount = new Map<string, number>();
          for (const child of children) {
            namesCount.set(child.name, (namesCount.get(child.name) ?? 0) + 1);
          }
          const jobIds = new Set(familyJobs.map((job) => job.id));
          clients.forEach((client, i) => {
            const policy = policies[i] as { version: number; value?: number };
            const rules = client.writes.filter((w) => w.kind === 'rule');
            const acknowledgedRules = rules.filter((w) => w.acknowledged).length;
            const changes = policy.version - client.initialVersion;
            if (changes < acknowledgedRules) {
              lost.push(
                `policy of client ${i}: ${acknowledgedRules} rule writes acknowledged, version raised ${changes} times`,
              );
            }
            if (changes > rules.length) {
              duplicated.push(
                `policy of client ${i}: ${rules.length} rule writes (keys) sent, version raised ${changes} times`,
              );
            }
            const lastAcknowledged = rules.map((w) => w.acknowledged).lastIndexOf(true);
            if (lastAcknowledged >= 0) {
              const possible = rules.slice(lastAcknowledged).map((w) => w.value);
              if (!possible.includes(policy.value)) {
                lost.push(
                  `policy of client ${i}: ${RULE}=${policy.value}, the last acknowledged write set ${possible[0]}`,
                );
              }
            }
            const enforces = client.writes.filter((w) => w.kind === 'enforce');
            const manual = familyJobs.filter(
              (job) => job.child_id === client.childId && job.trigger_type === 'manual',
            );
            if (manual.length > enforces.length) {
              duplicated.push(
                `manual jobs of client ${i}'s child: ${manual.length} for ${enforces.length} keys`,
              );
            }
            const acknowledgedJobs = new Set(
              enforces.flatMap((w) => (w.acknowledged ? [w.id] : [])),
            );
            for (const job of manual) {
              if (!acknowledgedJobs.has(job.id)) {
                landedUnacknowledged.push(`job ${job.id}`);
              }
            }
          });
          for (const write of writes) {
            if (write.kind === 'child') {
              const count = namesCount.get(write.identity) ?? 0;
              if (write.acknowledged && !children.some((child) => child.id === write.id)) {
                lost.push(`child "${write.identity}" (${write.id}, key ${write.key})`);
              }
              if (count > 1) {
                duplicated.push(`child "${write.identity}" ×${count} (key ${write.key})`);
              }
              if (!write.acknowledged && count > 0) {
                landedUnacknowledged.push(`child "${write.identity}"`);
              }
            } else if (
              write.kind === 'enforce' &&
              write.acknowledged &&
              !jobIds.has(write.id ?? '')
            ) {
              lost.push(`job ${write.id} (key ${write.key})`);
            }
          }

          // 3. Jobs finished, each announced once.
          const unfinished = familyJobs
            .filter((job) => !TERMINAL.has(job.status))
            .map((job) => `${job.id} ${job.trigger_type} ${job.status}`);
          const jobEvents = { missing: [] as string[], repeated: [] as string[] };
          const wrongEvent: string[] = [];
          for (const job of familyJobs.filter((j) => TERMINAL.has(j.status))) {
            once(`enforcement ${job.id}`, `job ${job.id}`, jobEvents);
            const types = new Set(
              messages
                .filter((m) => m.type.startsWith('enforcement.') && m.data.id === job.id)
                .map((m) => m.type),
            );
            if (types.size > 0 && (types.size > 1 || !types.has(`enforcement.${job.status}`))) {
              wrongEvent.push(`job ${job.id} ${job.status}: ${[...types].join(', ')}`);
            }
          }
          // 4. Every committed change's event under exactly one webhook-id.
          const changeEvents = { missing: [] as string[], repeated: [] as string[] };
          for (const child of children) {
            once(`child.created ${child.id}`, `child.created of "${child.name}"`, changeEvents);
          }
          clients.forEach((client, i) => {
            const version = (policies[i] as { version: number }).version;
            for (let v = client.initialVersion + 1; v <= version; v++) {
              once(
                `policy.updated ${client.policyId} v${v}`,
                `policy.updated of client ${i} v${v}`,
                changeEvents,
              );
            }
          });
          const badSignature = messages
            .filter((m) => !m.verified)
            .map((m) => `${m.webhookId || '(no webhook-id)'} ${m.type}`);
          const bodies = new Map<string, string>();
          const changedOnRedelivery: string[] = [];
          for (const message of messages) {
            const first = bodies.get(message.webhookId);
            if (first === undefined) {
              bodies.set(message.webhookId, message.body);
            } else if (first !== message.body) {
              changedOnRedelivery.push(message.webhookId);
            }
          }
          return {
            figures: {
              children: children.length,
              jobs: familyJobs.length,
              manualJobs: familyJobs.filter((job) => job.trigger_type === 'manual').length,
              deliveries: messages.length,
              webhookIds: bodies.size,
            },
            lost: finding(lost),
            duplicated: finding(duplicated),
            landedUnacknowledged: finding(landedUnacknowledged),
            unfinishedJobs: finding(unfinished),
            jobEventMissing: finding(jobEvents.missing),
            jobEventRepeated: finding(jobEvents.repeated),
            jobEventWrongType: finding(wrongEvent),
            changeEventMissing: finding(changeEvents.missing),
            changeEventRepeated: finding(changeEvents.repeated),
            badSignature: finding(badSignature),
            changedOnRedelivery: finding(changedOnRedelivery),
          };
        }

        type Report = Awaited<ReturnType<typeof examine>>;
        /** What is still wrong (what landed unacknowledged is an account, not a fault). */
        const outstanding = (report: Report) =>
          Object.entries(report).reduce(
            (sum, [name, value]) =>
              name === 'figures' || name === 'landedUnacknowledged'
                ? sum
                : sum + (value as Finding).count,
            0,
          );
        // How many things were still wrong, and when (seconds after the load), as it changed.
        const timeline: string[] = [];
        let report = await examine();
        for (let last = -1; ; ) {
          const now = outstanding(report);
          if (now !== last) {
            timeline.push(`${((Date.now() - loadEnd) / 1000).toFixed(0)}s: ${now}`);
            last = now;
          }
          if (now === 0 || Date.now() >= deadline) {
            break;
          }
          await delay(1_000);
          report = await examine();
        }
        const settledAt = Date.now();
        await watch.stop();

        // ---- The account of the run, then the assertions. ----
        const byKind = (kind: Kind) => writes.filter((w) => w.kind === kind);
        const tally = (kind: Kind) =>
          `${kind} ${byKind(kind).filter((w) => w.acknowledged).length}/${byKind(kind).length}`;
        const retriedWrites = writes.filter((w) => w.attempts > 1);
        const retryReasons: Record<string, number> = {};
        for (const write of writes) {
          for (const [why, count] of Object.entries(write.retried)) {
            retryReasons[why] = (retryReasons[why] ?? 0) + count;
          }
        }
        const unacknowledged = writes.filter((w) => !w.acknowledged);
        const finals: Record<string, number> = {};
        for (const write of unacknowledged) {
          const final = write.final.slice(0, 60);
          finals[final] = (finals[final] ?? 0) + 1;
        }
        const stillRunning = [...apis, ...workers].filter(
          (running) =>
            running !== killedApi &&
            running !== killedWorker &&
            (running.child.exitCode !== null || running.child.signalCode !== null),
        );
        console.log(
          [
            `multi-instance durability: ${writes.length} writes by ${CLIENTS} clients in ${LOAD_MS / 1000} s (acknowledged ${tally('child')}, ${tally('rule')}, ${tally('enforce')}); ` +
              `${retriedWrites.length} retried (${JSON.stringify(retryReasons)}), ${writes.filter((w) => w.replayed).length} answered by a replay; ` +
              `retries over ${((writesDoneAt - loadEnd) / 1000).toFixed(1)} s after the load, settled ${((settledAt - loadEnd) / 1000).toFixed(1)} s after it`,
            `  processes started in ${startup} s, setup ${((loadStart - setupStart) / 1000).toFixed(1)} s; killed at ${(kill.at / 1000).toFixed(1)} s with ${kill.inFlight} requests in hand; still wrong after the load: ${timeline.join(', ')}`,
            `  unacknowledged: ${unacknowledged.length} ${JSON.stringify(finals)}`,
            `  balancer: ${lb.upstreams.map((u) => `${u.url} answered ${u.answered} failed ${u.failed} ${JSON.stringify(u.failures)}${u.live ? '' : ` dropped (${u.droppedFor})`}`).join('; ')}`,
            `  burst of ${BURST} on one org key: ${burst.allowed} allowed, ${burst.limited} limited, other ${JSON.stringify(burst.other)}, over ${burst.upstreamsAnswering} instances`,
            `  ${JSON.stringify(report, null, 1).replace(/\n\s*/g, ' ')}`,
          ].join('\n'),
        );

        // The run itself: every kind written and acknowledged, none refused, the balancer
        // stopped sending to the dead instance, and nothing else died.
        for (const kind of ['child', 'rule', 'enforce'] as const) {
          expect
            .soft(byKind(kind).filter((w) => w.acknowledged).length, `acknowledged ${kind} writes`)
            .toBeGreaterThanOrEqual(MIN_ACKNOWLEDGED);
        }
        expect
          .soft(
            finding(
              writes.filter((w) => /^4\d\d /.test(w.final)).map((w) => `${w.key}: ${w.final}`),
            ),
            'writes refused (4xx): each is valid',
          )
          .toEqual(NONE);
        expect.soft(victim.live, 'the killed instance dropped by the balancer').toBe(false);
        expect
          .soft(
            stillRunning.map(
              (running) => running.output.stderr.slice(-2000) || running.output.stdout.slice(-2000),
            ),
            'processes the test did not kill still running',
          )
          .toEqual([]);

        // 1. Nothing acknowledged lost. 2. Nothing twice. 3. Every job finished, announced by
        // one enforcement.* message (of its status). 4. Each committed change's event under
        // exactly one webhook-id, signed.
        const guarantees: Array<[keyof typeof report, string]> = [
          ['lost', 'acknowledged writes lost'],
          ['duplicated', 'writes that landed twice'],
          ['unfinishedJobs', 'enforcement jobs not finished'],
          ['jobEventMissing', 'finished jobs with no enforcement.* message'],
          ['jobEventRepeated', 'jobs announced under several webhook-ids'],
          ['jobEventWrongType', 'jobs announced as other than their status'],
          ['changeEventMissing', 'committed changes whose event never arrived'],
          ['changeEventRepeated', 'changes announced under several webhook-ids'],
          ['badSignature', 'deliveries failing Standard Webhooks verification'],
          ['changedOnRedelivery', 'webhook-ids redelivered with another body'],
        ];
        for (const [finding, what] of guarantees) {
          expect.soft(report[finding], what).toEqual(NONE);
        }
        // 5. One bucket across the instances.
        expect
          .soft(
            {
              allowed: burst.allowed,
              limited: burst.limited,
              other: burst.other,
              instances: burst.upstreamsAnswering,
            },
            `a burst of ${BURST} on one org key across ${APIS} instances`,
          )
          .toEqual({ allowed: ORG_LIMIT, limited: BURST - ORG_LIMIT, other: [], instances: APIS });

        // ---- Observed through /metrics. ----
        const db = (database as TestDatabase).handle.db;
        const survivors = apis.filter((api) => api !== killedApi);
        const liveWorkers = workers.filter((worker) => worker !== killedWorker);
        const nameOf = (running: RunningScript) =>
          apis.includes(running)
            ? `api ${apis.indexOf(running)}`
            : `worker ${workers.indexOf(running)}`;

        // Every process answered its scrapes all along (the killed ones until they died), and
        // no count of requests ever went down.
        const scrapes = [...apis, ...workers].map((running) => {
          const watched = watch.instances.get(urlOf(running)) as WatchedInstance;
          const killed = running === killedApi || running === killedWorker;
          return {
            process: nameOf(running),
            scrapes: watched.ok,
            failedAlive: killed ? 0 : watched.failed,
            wentDown: watched.requests.some((count, i) => count < (watched.requests[i - 1] ?? 0)),
            lastError: killed ? undefined : watched.lastError,
          };
        });
        expect
          .soft(
            scrapes.filter((s) => s.scrapes < 3 || s.failedAlive > 0 || s.wentDown),
            'processes not scraped at least 3 times, failing scrapes while alive, or counts going down',
          )
          .toEqual([]);

        // 7. Jobs and deliveries, in a wave after the kill: one worker left, and each side of
        // the count read while no job of the queues runs (a run is counted a moment before the
        // database shows it finished).
        const quiet = (what: string) =>
          eventually(
            async () => (await jobsPending(db, WATCHED_QUEUES, 30)) === 0,
            what,
            SETTLE_MS,
          );
        const workerCounts = async () =>
          countedWork(
            await Promise.all(liveWorkers.map((worker) => scrapeProcess(urlOf(worker)))),
            WATCHED_QUEUES,
          );
        await quiet("the run's jobs to end before the wave");
        const waveStart = {
          database: await workCounts(db, WATCHED_QUEUES),
          counted: await workerCounts(),
          received: receiver.received.length,
        };
        const waveWrites = clients.flatMap((client) => {
          const enforce = newWrite(
            client.index,
            -1,
            'enforce',
            'POST',
            `/api/v1/children/${client.childId}/enforce`,
            {},
            `enforce ${client.childId}`,
          );
          const rule = newWrite(
            client.index,
            -1,
            'rule',
            'PUT',
            `/api/v1/policies/${client.policyId}/rules/${RULE}`,
            { enabled: true, config: { daily_minutes: 1_000 } },
            `${client.policyId} ${RULE}=1000`,
          );
          return [enforce, rule].map((write) => {
            write.key = `${RUN}-wave-${client.index}-${write.kind}`;
            return write;
          });
        });
        const waveDeadline = Date.now() + 60_000;
        await Promise.all(waveWrites.map((write) => settle(write, waveDeadline)));
        await quiet("the wave's jobs to end");
        let wave: { database: WorkCounts; counted: WorkCounts; received: number } | undefined;
        await eventually(
          async () => {
            const database = workDelta(waveStart.database, await workCounts(db, WATCHED_QUEUES));
            const counted = workDelta(waveStart.counted, await workerCounts());
            const received = receiver.received.length - waveStart.received;
            wave = { database, counted, received };
            return (
              JSON.stringify(counted) === JSON.stringify(database) &&
              counted.deliveries.succeeded === received
            );
          },
          "the live worker's counters to match the database",
          10_000,
        ).catch(() => {});
        expect
          .soft(
            waveWrites.filter((write) => !write.acknowledged).map((w) => `${w.key}: ${w.final}`),
            'wave writes not acknowledged',
          )
          .toEqual([]);
        expect
          .soft(wave?.counted, 'jobs completed and delivery attempts: counters (the live worker)')
          .toEqual(wave?.database);
        expect
          .soft(wave?.counted.deliveries.succeeded, 'deliveries counted as succeeded')
          .toBe(wave?.received);
        expect
          .soft(
            wave?.database.completedJobs[QUEUES.enforcement],
            'enforcement jobs completed in the wave',
          )
          .toBeGreaterThanOrEqual(CLIENTS);
        expect
          .soft(wave?.database.deliveries.succeeded, 'deliveries made in the wave')
          .toBeGreaterThanOrEqual(CLIENTS);

        // 6. Requests: each survivor counted what the balancer sent it, from the first request
        // on (scrapes and probes aside). Exact, unless the balancer saw some fail (an answer
        // cut off may or may not have been counted: then within them).
        const requestCounts = () =>
          Promise.all(
            survivors.map(async (api) => {
              const i = apis.indexOf(api);
              const upstream = lb.upstreams[i] as (typeof lb.upstreams)[number];
              const now = balancedRequests(await scrapeProcess(urlOf(api)));
              const counted = now - (requestsAtStart.get(api) ?? 0);
              const answered = upstream.answered - (answeredAtStart[i] ?? 0);
              const failed = upstream.failed;
              return {
                api: nameOf(api),
                counted,
                answered,
                failed,
                addsUp: counted >= answered && counted <= answered + failed,
              };
            }),
          );
        let requests = await requestCounts();
        await eventually(
          async () => {
            requests = await requestCounts();
            return requests.every((r) => r.addsUp);
          },
          'the survivors to count what the balancer sent them',
          10_000,
        ).catch(() => {});
        expect
          .soft(requests, 'requests counted by each surviving API vs sent to it by the balancer')
          .toEqual(requests.map((r) => ({ ...r, addsUp: true })));
        // The killed API's last scrape: never more than it was sent.
        const killedCounts = watch.instances.get(urlOf(killedApi)) as WatchedInstance;
        const killedCounted =
          (killedCounts.requests.at(-1) ?? 0) - (requestsAtStart.get(killedApi) ?? 0);
        expect
          .soft(killedCounted, 'the killed API counted at most what it was sent')
          .toBeLessThanOrEqual(victim.answered + victim.failed);

        // 8. An API stopped with SIGTERM: /health/ready 503 at once, and requests the balancer
        // still sends it in the delay are served and counted; then the drain, and exit 0.
        const stopping = apis[2] as RunningScript;
        const stoppingUpstream = lb.upstreams[2] as (typeof lb.upstreams)[number];
        const signalledAt = Date.now();
        stopping.child.kill('SIGTERM');
        await eventually(
          async () => (await fetch(`${urlOf(stopping)}/health/ready`)).status === 503,
          "the stopping API's readiness to turn 503",
          10_000,
        );
        const notReadyAfter = Date.now() - signalledAt;
        const countedBefore = balancedRequests(await scrapeProcess(urlOf(stopping)));
        const answeredInDelayFrom = stoppingUpstream.answered;
        const statuses: number[] = [];
        for (let i = 0; i < 4; i++) {
          const response = await fetch(`${base}/api/v1/families/${family}`, {
            headers: { 'x-sandbox-session': SESSION, 'x-forwarded-for': nextAddress() },
          });
          await response.arrayBuffer();
          statuses.push(response.status);
        }
        const served = stoppingUpstream.answered - answeredInDelayFrom;
        let counted = -1;
        await eventually(
          async () => {
            counted = balancedRequests(await scrapeProcess(urlOf(stopping))) - countedBefore;
            return counted === served;
          },
          'the stopping API to count what it served',
          5_000,
        ).catch(() => {});
        const windowUsed = Date.now() - signalledAt;
        const exitCode = await Promise.race([stopping.exited, delay(30_000).then(() => 'no exit')]);
        const said = stopping.output.stdout
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => String((JSON.parse(line) as { msg?: unknown }).msg));
        const delayLine = said.indexOf(
          'shutting down: not ready, still serving for the shutdown delay',
        );
        expect
          .soft(
            {
              statuses,
              servedWhileNotReady: served > 0,
              counted: counted === served,
              notReadyThenDrained:
                delayLine >= 0 &&
                said.indexOf('shutting down: finishing in-flight requests') > delayLine,
              exitCode,
            },
            `an API stopped with SIGTERM (not ready after ${notReadyAfter} ms; requests and scrapes within ${windowUsed} ms of the signal)`,
          )
          .toEqual({
            statuses: [200, 200, 200, 200],
            servedWhileNotReady: true,
            counted: true,
            notReadyThenDrained: true,
            exitCode: 0,
          });

        console.log(
          [
            `multi-instance, observed: scrapes ${scrapes.map((s) => `${s.process} ${s.scrapes}`).join(', ')}`,
            `  requests (counted/sent by the balancer/failed there): ${requests.map((r) => `${r.api} ${r.counted}/${r.answered}/${r.failed}`).join(', ')}; the killed API's last scrape ${killedCounted}`,
            `  wave after the kill: database ${JSON.stringify(wave?.database)}, counted ${JSON.stringify(wave?.counted)}, received ${wave?.received}`,
            `  stop: not ready after ${notReadyAfter} ms; ${served} of the balancer's requests served and ${counted} counted in the delay; exit ${exitCode}`,
          ].join('\n'),
        );
      },
      PROCESS_TIMEOUT_MS,
    );
  },
);
