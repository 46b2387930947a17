// Writers for the crash tests (docs/decisions.md "Durability of acknowledged writes"): every
// kind of write a restart must keep once it is acknowledged, made over HTTP against a real
// server the way clients make them. Each writer has its own address (TRUST_PROXY), its own
// anonymous sandbox session (families, quick setups, devices, writes under an Idempotency-Key)
// and its own developer session with an org (API keys) and a family of its own (MCP tokens).
// After a restart, verifyAcknowledged() checks every acknowledged write of every kind, and
// landedUnacknowledged() lists what landed without the client ever being told.

/** The kinds of acknowledged writes, as the summary line counts them. */
export const KINDS = ['families', 'children', 'keys', 'tokens', 'devices', 'receipts'] as const;
export type Kind = (typeof KINDS)[number];

/** Every test run writes as its own users, from its own addresses (rate limits in Redis outlive a run). */
const RUN_OCTET = 1 + Math.floor(Math.random() * 250);

export interface Writer {
  index: number;
  phase: number;
  ip: string;
  /** Anonymous sandbox caller: no credential, its own X-Sandbox-Session. */
  anonymous: Record<string, string>;
  /** The writer's developer session (a sandbox session token). */
  session: Record<string, string>;
  orgId: string;
  /** A family of the session user: MCP tokens are minted for it. */
  familyId: string;
  /** Children of acknowledged quick setups: devices are registered on these. */
  children: string[];
}

export type Acknowledged =
  | {
      kind: 'family';
      writer: number;
      name: string;
      familyId: string;
      /** Written under an Idempotency-Key: the exact bytes to replay. */
      receipt?: { key: string; body: string };
    }
  | { kind: 'quick'; writer: number; name: string; familyId: string; childId: string }
  | { kind: 'key'; writer: number; keyId: string; secret: string }
  | { kind: 'token'; writer: number; tokenId: string; plain: string }
  | { kind: 'device'; writer: number; childId: string; deviceId: string; deviceKey: string };

export type Outcome = { label: string } & (
  | { kind: 'acknowledged'; write: Acknowledged }
  | { kind: 'refused'; status: number }
  | { kind: 'not connected' }
  | { kind: 'cut off'; error: string }
);

const JSON_TYPE = { 'content-type': 'application/json' };

/** A request whose answer must be `status`; anything else throws with the body. */
export async function call<T = Record<string, unknown>>(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: unknown,
  status: number,
): Promise<T> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? headers : { ...JSON_TYPE, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== status) {
    throw new Error(`${method} ${path}: expected ${status}, got ${response.status}: ${text}`);
  }
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

/** Address of a writer: one /24 per phase of the test, one random /16 per run. */
export function addressOf(phase: number, index: number): string {
  return `10.${RUN_OCTET}.${phase}.${index + 1}`;
}

let checks = 0;

/**
 * A new address for each check made after a restart: an anonymous caller is rate limited by
 * its address (100 a minute, in Redis across restarts), and a writer's checks can outnumber
 * that. The sandbox session, not the address, says whose data it is.
 */
export function checkAddress(): string {
  checks++;
  return `10.${RUN_OCTET}.${100 + Math.floor(checks / 250)}.${(checks % 250) + 1}`;
}

/** A writer's anonymous sandbox caller, from a fresh address. */
function checking(writer: Writer): Record<string, string> {
  return { ...writer.anonymous, 'x-forwarded-for': checkAddress() };
}

/** A developer session (a dev-issuer token) with an org, and a family for MCP tokens. */
export async function newDeveloper(url: string, ip: string, name: string) {
  const minted = await call<{ access_token: string }>(
    url,
    'POST',
    '/api/v1/sandbox/session-token',
    { 'x-forwarded-for': ip },
    {},
    201,
  );
  const session = { authorization: `Bearer ${minted.access_token}`, 'x-forwarded-for': ip };
  const org = await call<{ id: string }>(
    url,
    'POST',
    '/api/v1/developers/orgs',
    session,
    { name: `org ${name}` },
    201,
  );
  const family = await call<{ id: string }>(
    url,
    'POST',
    '/api/v1/families',
    session,
    { name: `mcp ${name}` },
    201,
  );
  return { session, orgId: org.id, familyId: family.id };
}

export async function newWriter(
  url: string,
  run: string,
  phase: number,
  index: number,
): Promise<Writer> {
  const ip = addressOf(phase, index);
  const developer = await newDeveloper(url, ip, `${run}-${index}`);
  const anonymous = {
    'x-forwarded-for': ip,
    'x-sandbox-session': `crash-${run}-${RUN_OCTET}-${index}`,
  };
  // The sandbox session exists before the writes start (its first use creates it).
  await call(url, 'GET', '/api/v1/families', anonymous, undefined, 200);
  return { index, phase, ip, anonymous, ...developer, children: [] };
}

/** Writes of one writer from one address (two thirds of them anonymous). */
const WRITES_PER_ADDRESS = 60;

type Operation = 'quick' | 'family' | 'key' | 'token' | 'device' | 'receipt';
const OPERATIONS: readonly Operation[] = ['quick', 'family', 'key', 'token', 'device', 'receipt'];

/** What to send for write `n` of a writer, and how to read its acknowledgement. */
function plan(
  writer: Writer,
  n: number,
): {
  label: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  read: (body: Record<string, unknown>) => Acknowledged;
} {
  // Writers start at different places in the cycle: every kind is in flight at any moment.
  let operation = OPERATIONS[(n + writer.index) % OPERATIONS.length] as Operation;
  const child = writer.children[writer.children.length - 1];
  if (operation === 'device' && child === undefined) {
    operation = 'quick';
  }
  // Every write is named uniquely, so what landed can be matched to what was sent.
  const name = `w-${writer.index}-${n}`;
  const w = writer.index;
  // A fresh address every ANONYMOUS_PER_ADDRESS writes keeps a long stream under the
  // per-address rate limit (100 a minute); the sandbox session says whose data it is.
  const anonymous = {
    ...writer.anonymous,
    'x-forwarded-for': addressOf(
      writer.phase,
      writer.index + 32 * Math.floor(n / WRITES_PER_ADDRESS),
    ),
  };
  switch (operation) {
    case 'quick':
      return {
        label: name,
        path: '/api/v1/setup/quick',
        headers: anonymous,
        body: JSON.stringify({
          child_name: `Kid ${n}`,
          birth_date: '2015-06-07',
          family_name: name,
        }),
        read: (body) => ({
          kind: 'quick',
          writer: w,
          name,
          familyId: (body.family as { id: string }).id,
          childId: (body.child as { id: string }).id,
        }),
      };
    case 'family':
      return {
        label: name,
        path: '/api/v1/families',
        headers: anonymous,
        body: JSON.stringify({ name }),
        read: (body) => ({ kind: 'family', writer: w, name, familyId: body.id as string }),
      };
    case 'receipt': {
      const key = `crash-${name}-${RUN_OCTET}`;
      const body = JSON.stringify({ name });
      return {
        label: name,
        path: '/api/v1/families',
        headers: { ...anonymous, 'idempotency-key': key },
        body,
        read: (answer) => ({
          kind: 'family',
          writer: w,
          name,
          familyId: answer.id as string,
          receipt: { key, body },
        }),
      };
    }
    case 'key':
      return {
        label: `key ${name}`,
        path: `/api/v1/developers/orgs/${writer.orgId}/keys`,
        headers: writer.session,
        body: JSON.stringify({ name, environment: 'test' }),
        read: (body) => ({
          kind: 'key',
          writer: w,
          keyId: body.id as string,
          secret: body.key as string,
        }),
      };
    case 'token':
      return {
        label: `token ${name}`,
        path: '/api/v1/mcp/tokens',
        headers: writer.session,
        body: JSON.stringify({ family_id: writer.familyId, label: name }),
        read: (body) => ({
          kind: 'token',
          writer: w,
          tokenId: (body.token as { id: string }).id,
          plain: body.plain as string,
        }),
      };
    case 'device':
      return {
        label: `device ${name}`,
        path: `/api/v1/children/${child}/devices`,
        headers: anonymous,
        body: JSON.stringify({ device_name: name }),
        read: (body) => ({
          kind: 'device',
          writer: w,
          childId: child as string,
          deviceId: (body.device as { id: string }).id,
          deviceKey: body.device_key as string,
        }),
      };
  }
}

/** One write; a 201 is an acknowledgement. */
export async function write(url: string, writer: Writer, n: number): Promise<Outcome> {
  const planned = plan(writer, n);
  const label = planned.label;
  try {
    const response = await fetch(`${url}${planned.path}`, {
      method: 'POST',
      headers: { ...JSON_TYPE, ...planned.headers },
      body: planned.body,
    });
    const text = await response.text();
    if (response.status !== 201) {
      return { label, kind: 'refused', status: response.status };
    }
    const acknowledged = planned.read(JSON.parse(text) as Record<string, unknown>);
    if (acknowledged.kind === 'quick') {
      writer.children.push(acknowledged.childId);
    }
    return { label, kind: 'acknowledged', write: acknowledged };
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code ?? String(error);
    // Refused before anything was sent: the server no longer accepts connections.
    return code === 'ECONNREFUSED'
      ? { label, kind: 'not connected' }
      : { label, kind: 'cut off', error: code };
  }
}

/**
 * Every writer loops, one write after another, until `stopped()` says so, the server stops
 * accepting connections, or it made `max` writes; `onOutcome` sees every answer as it comes.
 */
export async function writeUntil(
  url: string,
  writers: Writer[],
  stopped: () => boolean,
  onOutcome: (outcome: Outcome) => void = () => {},
  max = 150,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  await Promise.all(
    writers.map(async (writer) => {
      for (let n = 0; n < max && !stopped(); n++) {
        const outcome = await write(url, writer, n);
        outcomes.push(outcome);
        onOutcome(outcome);
        if (outcome.kind === 'not connected') {
          return;
        }
      }
    }),
  );
  return outcomes;
}

export function acknowledgedWrites(outcomes: Outcome[]): Acknowledged[] {
  return outcomes.flatMap((o) => (o.kind === 'acknowledged' ? [o.write] : []));
}

export type Tally = Record<Kind, { acknowledged: number; lost: string[] }>;

function emptyTally(): Tally {
  const tally = {} as Partial<Tally>;
  for (const kind of KINDS) {
    tally[kind] = { acknowledged: 0, lost: [] };
  }
  return tally as Tally;
}

async function status(url: string, path: string, headers: Record<string, string>) {
  const response = await fetch(`${url}${path}`, { headers });
  await response.arrayBuffer();
  return response.status;
}

async function list<T>(url: string, path: string, headers: Record<string, string>): Promise<T[]> {
  return call<T[]>(url, 'GET', path, headers, undefined, 200);
}

/**
 * After a restart: every acknowledged family and child is served, every key and MCP token
 * authenticates (and each key is in its org's list), every device key reads its policy, and
 * every Idempotency-Key replays its stored answer without a second family being created.
 */
export async function verifyAcknowledged(
  url: string,
  writers: Writer[],
  outcomes: Outcome[],
): Promise<Tally> {
  const tally = emptyTally();
  const lose = (kind: Kind, what: string) => tally[kind].lost.push(what);
  const writes = acknowledgedWrites(outcomes);
  for (const written of writes) {
    const writer = writers[written.writer] as Writer;
    switch (written.kind) {
      case 'family':
      case 'quick': {
        tally.families.acknowledged++;
        const family = await status(url, `/api/v1/families/${written.familyId}`, checking(writer));
        if (family !== 200) {
          lose('families', `family ${written.name} (${written.familyId}): ${family}`);
        }
        if (written.kind === 'quick') {
          tally.children.acknowledged++;
          const child = await status(url, `/api/v1/children/${written.childId}`, checking(writer));
          if (child !== 200) {
            lose('children', `child of ${written.name} (${written.childId}): ${child}`);
          }
        }
        if (written.kind === 'family' && written.receipt) {
          tally.receipts.acknowledged++;
          const replay = await fetch(`${url}/api/v1/families`, {
            method: 'POST',
            headers: {
              ...JSON_TYPE,
              ...checking(writer),
              'idempotency-key': written.receipt.key,
            },
            body: written.receipt.body,
          });
          const text = await replay.text();
          const id = replay.status === 200 ? (JSON.parse(text) as { id?: string }).id : undefined;
          if (
            replay.status !== 200 ||
            replay.headers.get('ocss-replay') !== 'original' ||
            id !== written.familyId
          ) {
            lose(
              'receipts',
              `receipt ${written.receipt.key}: ${replay.status} ocss-replay=${replay.headers.get('ocss-replay')} ${text}`,
            );
          }
        }
        break;
      }
      case 'key': {
        tally.keys.acknowledged++;
        const used = await status(url, '/api/v1/developer/families', {
          authorization: `Bearer ${written.secret}`,
          'x-forwarded-for': writer.ip,
        });
        if (used !== 200) {
          lose('keys', `key ${written.keyId}: ${used}`);
        }
        break;
      }
      case 'token': {
        tally.tokens.acknowledged++;
        const used = await status(url, `/api/v1/families/${writer.familyId}`, {
          authorization: `Bearer ${written.plain}`,
          'x-forwarded-for': writer.ip,
        });
        if (used !== 200) {
          lose('tokens', `MCP token ${written.tokenId}: ${used}`);
        }
        break;
      }
      case 'device': {
        tally.devices.acknowledged++;
        const polled = await status(url, '/api/v1/device/policy', {
          'x-device-key': written.deviceKey,
        });
        if (polled !== 200) {
          lose('devices', `device ${written.deviceId}: ${polled}`);
        }
        break;
      }
    }
  }
  // Keys are listed by their org; a replay created no second family.
  for (const writer of writers) {
    const listed = new Set(
      (
        await list<{ id: string }>(
          url,
          `/api/v1/developers/orgs/${writer.orgId}/keys`,
          writer.session,
        )
      ).map((key) => key.id),
    );
    for (const written of writes) {
      if (written.kind === 'key' && written.writer === writer.index && !listed.has(written.keyId)) {
        lose('keys', `key ${written.keyId}: not in the org's key list`);
      }
    }
    const names = (await list<{ name: string }>(url, '/api/v1/families', checking(writer))).map(
      (family) => family.name,
    );
    for (const written of writes) {
      if (written.kind === 'family' && written.receipt && written.writer === writer.index) {
        const copies = names.filter((name) => name === written.name).length;
        if (copies !== 1) {
          lose(
            'receipts',
            `receipt ${written.receipt.key}: ${copies} families named ${written.name}`,
          );
        }
      }
    }
  }
  return tally;
}

export function lostCount(tally: Tally): number {
  return KINDS.reduce((sum, kind) => sum + tally[kind].lost.length, 0);
}

/** `acknowledged families=.. children=.. …; lost 0` (each loss is named after it). */
export function summaryOf(tally: Tally): string {
  const acknowledged = KINDS.map((kind) => `${kind}=${tally[kind].acknowledged}`).join(' ');
  const lost = lostCount(tally);
  const detail =
    lost === 0
      ? ''
      : ` (${KINDS.filter((kind) => tally[kind].lost.length > 0)
          .map((kind) => `${kind}=${tally[kind].lost.length}`)
          .join(' ')}): ${KINDS.flatMap((kind) => tally[kind].lost).join('; ')}`;
  return `acknowledged ${acknowledged}; lost ${lost}${detail}`;
}

/** How a write is named among what landed. */
function identityOf(written: Acknowledged): string {
  switch (written.kind) {
    case 'family':
    case 'quick':
      return `family ${written.name}`;
    case 'key':
      return `key ${written.keyId}`;
    case 'token':
      return `token ${written.tokenId}`;
    case 'device':
      return `device ${written.deviceId}`;
  }
}

/**
 * What landed without ever being acknowledged: families (by name), keys, MCP tokens and
 * devices that exist although no 201 for them reached the writer.
 */
export async function landedUnacknowledged(
  url: string,
  writers: Writer[],
  outcomes: Outcome[],
): Promise<string[]> {
  const writes = acknowledgedWrites(outcomes);
  const known = new Set(writes.map(identityOf));
  const landed: string[] = [];
  for (const writer of writers) {
    for (const family of await list<{ name: string }>(url, '/api/v1/families', checking(writer))) {
      if (family.name.startsWith('w-')) {
        landed.push(`family ${family.name}`);
      }
    }
    for (const key of await list<{ id: string }>(
      url,
      `/api/v1/developers/orgs/${writer.orgId}/keys`,
      writer.session,
    )) {
      landed.push(`key ${key.id}`);
    }
    for (const token of await list<{ id: string }>(url, '/api/v1/mcp/tokens', writer.session)) {
      landed.push(`token ${token.id}`);
    }
    for (const child of writer.children) {
      for (const device of await list<{ id: string }>(
        url,
        `/api/v1/children/${child}/devices`,
        checking(writer),
      )) {
        landed.push(`device ${device.id}`);
      }
    }
  }
  return landed.filter((what) => !known.has(what));
}
