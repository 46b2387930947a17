// Finishing a CREDENTIALS_KEY rotation (`npm run admin -- reseal-credentials`): every value
// the credential cipher sealed with an older key (platform credentials, webhook signing
// secrets, erasure release material) is opened with that key and sealed again with the first
// one, bound as before, so the old key can leave CREDENTIALS_KEY without a value becoming
// unreadable. Values sealed with a key that is no longer configured are counted and named by
// key id, never opened or changed: nothing can open them, and the operator must know.
import type { Db } from '../../db/connect.js';
import { secretBinding } from '../webhooks/signing.js';
import { createCredentialCipher, keyIdOf } from './credential-cipher.js';
import {
  countByKey,
  findSealed,
  replaceSealed,
  SEALED_COLUMNS,
  type SealedColumn,
  type SealedRow,
  sealedWithOtherKeys,
} from './reseal-store.js';
import { findGeneratedCredentialKey } from './service.js';

/** Rows read at a time: a batch's values are held in the clear only while it is resealed. */
const BATCH_SIZE = 200;
/** A row a server rewrites on every try is left for the next run rather than chased. */
const ATTEMPTS = 3;

interface SealedKind {
  name: string;
  column: SealedColumn;
  /** What each value is bound to (the cipher's associated data), as its writer bound it. */
  binding: (id: string) => string;
}

const KINDS: readonly SealedKind[] = [
  { name: 'connections', column: SEALED_COLUMNS.connections, binding: (id) => id },
  { name: 'webhooks', column: SEALED_COLUMNS.webhooks, binding: secretBinding },
  { name: 'erasure releases', column: SEALED_COLUMNS.erasureReleases, binding: (id) => id },
];

export interface ResealCounts {
  kind: string;
  resealed: number;
  /** Sealed with the first key already (a second run counts everything here). */
  current: number;
  /** Per key id that is not configured: values nothing here can open. */
  unknownKeys: Map<string, number>;
  /** Sealed with a configured key that does not open them (damaged, or copied onto another row). */
  unreadable: number;
  /** Rewritten by a server on every try: the next run takes them. */
  busy: number;
}

/**
 * The keys to reseal with: CREDENTIALS_KEY (the first seals), and, to move a sandbox onto a
 * configured key, the key it generated while it had none. Without CREDENTIALS_KEY there is
 * nothing to reseal onto: the generated key is the only one, and it stays in use.
 */
export async function resealKeys(
  db: Db,
  credentialKeys: Buffer[] | undefined,
): Promise<{ sealWith: Buffer; openWith: Buffer[] }> {
  const [sealWith, ...older] = credentialKeys ?? [];
  if (!sealWith) {
    throw new Error(
      'CREDENTIALS_KEY is not set: values are sealed with the key this sandbox generated and ' +
        'keeps in its database; set CREDENTIALS_KEY to the key to reseal them with, then run again',
    );
  }
  const generated = await findGeneratedCredentialKey(db);
  const configured = [sealWith, ...older];
  const isConfigured = (key: Buffer) => configured.some((other) => other.equals(key));
  return {
    sealWith,
    openWith: generated && !isConfigured(generated) ? [...older, generated] : older,
  };
}

export async function resealCredentials(
  db: Db,
  keys: { sealWith: Buffer; openWith: Buffer[] },
): Promise<ResealCounts[]> {
  const cipher = createCredentialCipher([keys.sealWith, ...keys.openWith]);
  const currentKeyId = keyIdOf(keys.sealWith);
  const openable = new Set(keys.openWith.map(keyIdOf));

  type Outcome = 'resealed' | 'current' | 'gone' | 'unreadable' | 'busy' | { unknown: string };

  /** One value, replaced only while the row still holds what was read (else read again). */
  async function resealOne(kind: SealedKind, first: SealedRow): Promise<Outcome> {
    let read: SealedRow | undefined = first;
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      if (!read) {
        return 'gone'; // deleted meanwhile: nothing left to reseal
      }
      if (read.keyId === currentKeyId) {
        return 'current'; // rewritten meanwhile by a server that seals with the new key
      }
      if (!openable.has(read.keyId)) {
        return { unknown: read.keyId };
      }
      const boundTo = kind.binding(read.id);
      let plain: unknown;
      try {
        plain = cipher.open(read, boundTo);
      } catch {
        return 'unreadable';
      }
      if (await replaceSealed(db, kind.column, read, cipher.seal(plain, boundTo))) {
        return 'resealed';
      }
      read = await findSealed(db, kind.column, read.id);
    }
    return 'busy';
  }

  async function resealKind(kind: SealedKind): Promise<ResealCounts> {
    const before = await countByKey(db, kind.column);
    const counts: ResealCounts = {
      kind: kind.name,
      resealed: 0,
      current: before.get(currentKeyId) ?? 0,
      unknownKeys: new Map(),
      unreadable: 0,
      busy: 0,
    };
    let after: string | undefined;
    for (;;) {
      const batch = await sealedWithOtherKeys(db, kind.column, currentKeyId, after, BATCH_SIZE);
      for (const row of batch) {
        const outcome = await resealOne(kind, row);
        if (typeof outcome === 'object') {
          counts.unknownKeys.set(
            outcome.unknown,
            (counts.unknownKeys.get(outcome.unknown) ?? 0) + 1,
          );
        } else if (outcome !== 'gone') {
          counts[outcome] += 1;
        }
      }
      if (batch.length < BATCH_SIZE) {
        return counts;
      }
      after = batch[batch.length - 1]?.id;
    }
  }

  const all: ResealCounts[] = [];
  for (const kind of KINDS) {
    all.push(await resealKind(kind));
  }
  return all;
}

/** `connections 3 resealed, 0 already current; webhooks …`: counts only, never a value. */
export function describeCounts(all: ResealCounts[]): string {
  return all
    .map((c) => `${c.kind} ${c.resealed} resealed, ${c.current} already current`)
    .join('; ');
}

/** What kept the rotation from finishing, per kind (undefined: nothing). */
export function describeProblems(all: ResealCounts[]): string | undefined {
  const problems: string[] = [];
  let unknown = false;
  for (const c of all) {
    for (const [keyId, n] of c.unknownKeys) {
      unknown = true;
      problems.push(`${c.kind}: ${n} sealed with key ${keyId}, which is not configured`);
    }
    if (c.unreadable > 0) {
      problems.push(`${c.kind}: ${c.unreadable} could not be opened with the key they name`);
    }
    if (c.busy > 0) {
      problems.push(`${c.kind}: ${c.busy} changed on every try; run again`);
    }
  }
  if (problems.length === 0) {
    return undefined;
  }
  const hint = unknown
    ? ' (CREDENTIALS_KEY must still list every key values were sealed with, after the new one)'
    : '';
  return `${problems.join('; ')}${hint}`;
}
