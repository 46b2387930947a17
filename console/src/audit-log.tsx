// The audit log (CONTRACT.md §12.1): a family's or an org's timeline, newest first, a page
// at a time (`before` / `next_before`), and "Verify chain", which fetches the whole chain
// (and, for a family, its signed head and the steward's key) and recomputes it here in the
// browser with the SDK's verifier: the console trusts nothing Haven says about the chain.
import type { AuditChainVerification, AuditEntry, AuditHead, Haven, StewardKeys } from '@haven/sdk';
import { useEffect, useState } from 'preact/hooks';
import { href } from './router.js';
import { baseUrl, isSignedOut, messageOf } from './session.js';
import { Empty, ErrorText, type OnSignedOut, Section, useAction, when } from './ui.js';

/** Entries a page of the timeline shows. */
export const PAGE_SIZE = 25;
/** Entries a request of the whole-chain read asks for (the API's largest page). */
const CHAIN_PAGE = 200;

interface Page {
  entries: AuditEntry[];
  next_before: string | null;
}

/** A changed value, short: strings as they are, the rest as compact JSON. */
function shortValue(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

function Changes(props: { changes: Record<string, unknown> }) {
  const fields = Object.entries(props.changes);
  if (fields.length === 0) {
    return <span class="muted">no field</span>;
  }
  return (
    <dl class="audit-changes">
      {fields.map(([field, value]) => (
        <div key={field}>
          <dt>{field}</dt>
          <dd>
            <code>{shortValue(value)}</code>
          </dd>
        </div>
      ))}
    </dl>
  );
}

function Entry(props: { entry: AuditEntry }) {
  const { entry } = props;
  return (
    <li class="audit-entry">
      <div class="audit-entry-head">
        <time dateTime={entry.occurred_at}>{when(entry.occurred_at)}</time>
        <code class="audit-action">{entry.action}</code>
        <span class="muted">#{entry.seq}</span>
      </div>
      <p class="audit-entry-who">
        <span class="audit-label">Actor</span>{' '}
        <span class="actor">
          {entry.actor.type} · {entry.actor.label}
        </span>{' '}
        <span class="audit-label">Target</span>{' '}
        <span class="target">
          {entry.target.type} <code>{entry.target.id.slice(0, 8)}</code>
        </span>
      </p>
      <Changes changes={entry.changes} />
    </li>
  );
}

/** Says what the verifier found, as a person reads it. */
export function verdict(result: AuditChainVerification, head: AuditHead | null): string {
  if (!result.valid) {
    const where = result.seq === null ? 'an entry' : `entry #${result.seq}`;
    return `Chain broken at ${where}${result.id ? ` (${result.id.slice(0, 8)})` : ''}: ${result.reason}.`;
  }
  const chain = `Chain verified: ${result.entries} entr${result.entries === 1 ? 'y' : 'ies'} recomputed, head hash ${result.head_hash.slice(0, 12)}…`;
  if (!head) {
    return `${chain} (an org's chain has no signed head).`;
  }
  if (result.signature === 'verified') {
    return `${chain}; the head signed ${when(head.signed_at)} (${head.entries} entries) is verified with the steward's key.`;
  }
  return `${chain}; the head matches, its signature was not checked: ${result.note ?? 'no key'}.`;
}

/**
 * The timeline of one chain: `page(before)` reads a page of it, `verify()` recomputes the
 * whole chain and says the verdict.
 */
function AuditTimeline(props: {
  /** Changes when the chain does (a new family or org): the timeline starts again. */
  chain: string;
  page: (before: string | undefined) => Promise<Page>;
  verify: () => Promise<string>;
  onSignedOut: OnSignedOut;
}) {
  const { busy, error, run } = useAction(props.onSignedOut);
  const [entries, setEntries] = useState<AuditEntry[] | null>(null);
  const [nextBefore, setNextBefore] = useState<string | null>(null);
  const [verifying, setVerifying] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);

  const first = async () => {
    const page = await props.page(undefined);
    setEntries(page.entries);
    setNextBefore(page.next_before);
  };
  useEffect(() => {
    setEntries(null);
    setResult(null);
    void run(first);
  }, [props.chain]);

  const verify = async () => {
    setVerifying(true);
    setResult(null);
    try {
      const text = await props.verify();
      setResult({ ok: text.startsWith('Chain verified'), text });
    } catch (failure) {
      if (isSignedOut(failure)) {
        props.onSignedOut('Your session has expired or was refused: sign in again.');
        return;
      }
      setResult({ ok: false, text: `The chain could not be read: ${messageOf(failure)}` });
    } finally {
      setVerifying(false);
    }
  };

  return (
    <>
      <div class="row">
        <button type="button" disabled={busy} onClick={() => run(first)}>
          Show newest
        </button>
        <button type="button" disabled={verifying} onClick={() => void verify()}>
          Verify chain
        </button>
      </div>
      <p role="status" class={result?.ok ? 'verified' : result ? 'error' : 'muted'}>
        {verifying ? 'Verifying the chain…' : (result?.text ?? '')}
      </p>
      <ErrorText error={error} />
      {entries === null ? (
        <p class="loading">Loading the audit log…</p>
      ) : entries.length === 0 ? (
        <Empty>
          No entry yet: every change to this {props.chain.split(':')[0]} is written here.
        </Empty>
      ) : (
        <>
          <ol class="audit-timeline" aria-label="Audit entries">
            {entries.map((entry) => (
              <Entry key={entry.id} entry={entry} />
            ))}
          </ol>
          {nextBefore ? (
            <button
              type="button"
              disabled={busy}
              onClick={() =>
                run(async () => {
                  const page = await props.page(nextBefore);
                  setEntries((shown) => [...(shown ?? []), ...page.entries]);
                  setNextBefore(page.next_before);
                })
              }
            >
              Load older
            </button>
          ) : (
            <p class="muted">The oldest entry kept is shown.</p>
          )}
        </>
      )}
    </>
  );
}

/** Every entry of a chain, page after page. */
async function wholeChain(pages: AsyncIterable<AuditEntry>): Promise<AuditEntry[]> {
  const all: AuditEntry[] = [];
  for await (const entry of pages) {
    all.push(entry);
  }
  return all;
}

/** The steward's published keys, from Haven's own origin. */
async function stewardKeys(): Promise<StewardKeys> {
  const response = await fetch(`${baseUrl}/.well-known/ocss/keys`);
  if (!response.ok) {
    throw new Error(`the steward's keys answered ${response.status}`);
  }
  return (await response.json()) as StewardKeys;
}

export function FamilyAuditLog(props: {
  haven: Haven;
  onSignedOut: OnSignedOut;
  familyId: string;
}) {
  const { haven, familyId } = props;
  return (
    <Section title="Audit log" id="family-audit-log">
      <AuditTimeline
        chain={`family:${familyId}`}
        onSignedOut={props.onSignedOut}
        page={async (before) => await haven.auditLog.list(familyId, { limit: PAGE_SIZE, before })}
        verify={async () => {
          // The head first: entries written after it was signed are newer than it, which
          // the verifier allows; a head read after the entries could name one not read.
          const head = await haven.auditLog.head(familyId);
          const [entries, keys] = await Promise.all([
            wholeChain(haven.auditLog.list(familyId, { limit: CHAIN_PAGE })),
            stewardKeys(),
          ]);
          return verdict(await haven.auditLog.verify(entries, { head, stewardKey: keys }), head);
        }}
      />
    </Section>
  );
}

type Org = Awaited<ReturnType<Haven['orgs']['list']>>[number];

/** The orgs whose log the caller may read: those where it is an owner or an admin. */
function useReadableOrgs(haven: Haven, run: (action: () => Promise<void>) => Promise<void>) {
  const [orgs, setOrgs] = useState<Org[] | null>(null);
  useEffect(
    () =>
      void run(async () => {
        const [me, all] = await Promise.all([haven.auth.me(), haven.orgs.list()]);
        const roles = await Promise.all(
          all.map(async (org) => {
            const members = await haven.orgs.listMembers(org.id);
            return members.find((member) => member.user_id === me.id)?.role;
          }),
        );
        setOrgs(all.filter((_, i) => roles[i] === 'owner' || roles[i] === 'admin'));
      }),
    [haven],
  );
  return orgs;
}

export function OrgAuditLog(props: {
  haven: Haven;
  onSignedOut: OnSignedOut;
  orgId: string | null;
  onSelectOrg: (orgId: string) => void;
}) {
  const { haven } = props;
  const { error, run } = useAction(props.onSignedOut);
  const orgs = useReadableOrgs(haven, run);
  const chosen = orgs?.find((org) => org.id === props.orgId) ?? orgs?.[0];
  return (
    <Section title="Audit log" id="audit-log">
      <p class="muted">
        An organization's log: its keys, members and settings. A family's log is on the family's
        page (<a href={href({ view: 'families' })}>Families</a>).
      </p>
      <ErrorText error={error} />
      {orgs === null ? (
        error ? null : (
          <p class="loading">Loading your organizations…</p>
        )
      ) : orgs.length === 0 || !chosen ? (
        <Empty>
          An organization's log is read by its owners and admins: you are neither in any
          organization. Create one on the <a href={href({ view: 'developers' })}>Developers</a>{' '}
          page.
        </Empty>
      ) : (
        <>
          <div class="inline">
            <label for="audit-org">Organization</label>
            <select
              id="audit-org"
              value={chosen.id}
              onChange={(event) => props.onSelectOrg((event.target as HTMLSelectElement).value)}
            >
              {orgs.map((org) => (
                <option key={org.id} value={org.id}>
                  {org.name}
                </option>
              ))}
            </select>
          </div>
          <AuditTimeline
            chain={`organization:${chosen.id}`}
            onSignedOut={props.onSignedOut}
            page={async (before) =>
              await haven.auditLog.listOrg(chosen.id, { limit: PAGE_SIZE, before })
            }
            verify={async () => {
              const entries = await wholeChain(
                haven.auditLog.listOrg(chosen.id, { limit: CHAIN_PAGE }),
              );
              return verdict(await haven.auditLog.verify(entries), null);
            }}
          />
        </>
      )}
    </Section>
  );
}
