// A family's two whole-family acts: Export (the §12.2 document, downloaded as a file) and
// Delete family (typed confirmation, then the erasure receipt read until it completes and its
// signature checked here against the keys Haven publishes). Each is offered only where it can
// succeed: the demo family is read-only, export needs an owner or a parent, deletion an owner.
import type { ErasureReceipt, Haven, Result } from '@haven/sdk';
import { useEffect, useRef, useState } from 'preact/hooks';
import { href } from './router.js';
import { baseUrl } from './session.js';
import { ErrorText, type OnSignedOut, useAction, when } from './ui.js';

type Family = Result<'getFamily'>;

export interface ErasureStarted {
  erasureId: string;
  familyName: string;
}

/** Why an act cannot be done here (null: it can). */
function refusal(act: 'export' | 'delete', demo: boolean, role: string): string | null {
  if (demo) {
    return 'The demo family is read-only: it cannot be exported or deleted.';
  }
  if (act === 'export' && role !== 'owner' && role !== 'parent') {
    return 'Only an owner or a parent can export the family.';
  }
  if (act === 'delete' && role !== 'owner') {
    return 'Only an owner can delete the family.';
  }
  return null;
}

/** Saves a document as a file, from memory: a Blob, an object URL and a `download` link. */
function saveAs(fileName: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has its own copy once it started; the URL is not needed after that.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function DeleteFamily(props: {
  haven: Haven;
  onSignedOut: OnSignedOut;
  family: Family;
  role: string;
  demo: boolean;
  onErased: (started: ErasureStarted) => void;
}) {
  const { haven, family } = props;
  const [confirming, setConfirming] = useState(false);
  const [typed, setTyped] = useState('');
  const [exported, setExported] = useState<string | null>(null);
  const { busy, error, run } = useAction(props.onSignedOut);
  const field = useRef<HTMLInputElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  const exportRefused = refusal('export', props.demo, props.role);
  const deleteRefused = refusal('delete', props.demo, props.role);
  const reasons = [...new Set([exportRefused, deleteRefused].filter(Boolean))];
  const matches = typed === family.name;

  useEffect(() => {
    if (confirming) {
      field.current?.focus();
    }
  }, [confirming]);

  const cancel = () => {
    setConfirming(false);
    setTyped('');
    // Back to the button that opened the confirmation (it is rendered again first).
    setTimeout(() => opener.current?.focus(), 0);
  };

  return (
    <div class="family-acts">
      <div class="row">
        <button
          type="button"
          disabled={busy || exportRefused !== null}
          aria-describedby={exportRefused ? 'family-acts-reason' : undefined}
          onClick={() =>
            void run(async () => {
              setExported(null);
              const record = await haven.families.export(family.id);
              const fileName = `haven-family-${family.id}.json`;
              saveAs(fileName, `${JSON.stringify(record, null, 2)}\n`);
              setExported(fileName);
            })
          }
        >
          Export
        </button>
        {confirming ? null : (
          <button
            type="button"
            class="danger"
            ref={opener}
            disabled={busy || deleteRefused !== null}
            aria-describedby={deleteRefused ? 'family-acts-reason' : undefined}
            onClick={() => setConfirming(true)}
          >
            Delete family
          </button>
        )}
      </div>
      {reasons.length > 0 ? (
        <p class="muted" id="family-acts-reason">
          {reasons.join(' ')}
        </p>
      ) : null}
      {exported ? (
        <p class="muted" role="status">
          Exported as <code>{exported}</code>.
        </p>
      ) : null}
      {confirming ? (
        <form
          class="confirm-delete"
          aria-label="Confirm deletion"
          onSubmit={(event) => {
            event.preventDefault();
            if (!matches) {
              return;
            }
            void run(async () => {
              const { response } = await haven.families.delete(family.id).withResponse();
              const erasureId = response.headers.get('haven-erasure-id');
              if (!erasureId) {
                throw new Error('the family was erased, but Haven named no erasure receipt');
              }
              props.onErased({ erasureId, familyName: family.name });
            });
          }}
          onKeyDown={(event) => {
            if (event.key === 'Escape') {
              cancel();
            }
          }}
        >
          <p id="confirm-delete-help">
            This erases <strong>{family.name}</strong> with everything Haven holds about it: its
            children, policies, connections (their platforms are released), devices, webhooks and
            audit log. It cannot be undone. Type the family's name to confirm.
          </p>
          <div class="row">
            <label for="confirm-family-name">Family name</label>
            <input
              id="confirm-family-name"
              ref={field}
              autoComplete="off"
              spellcheck={false}
              aria-describedby="confirm-delete-help"
              value={typed}
              onInput={(event) => setTyped((event.target as HTMLInputElement).value)}
            />
          </div>
          <div class="row">
            <button type="submit" class="danger" disabled={busy || !matches}>
              Delete family
            </button>
            <button type="button" onClick={cancel}>
              Cancel
            </button>
          </div>
        </form>
      ) : null}
      <ErrorText error={error} />
    </div>
  );
}

type Verdict = { valid: true; kid: string } | { valid: false; reason: string };

/** The erasure's receipt, read again each second until it completes, then its signature checked. */
export function ErasureReceiptView(props: {
  haven: Haven;
  onSignedOut: OnSignedOut;
  started: ErasureStarted;
}) {
  const { haven, started } = props;
  const [receipt, setReceipt] = useState<ErasureReceipt | null>(null);
  const [verdict, setVerdict] = useState<Verdict | null>(null);
  const { error, run } = useAction(props.onSignedOut);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = () =>
      void run(async () => {
        const current = await haven.erasures.get(started.erasureId);
        if (stopped) {
          return;
        }
        setReceipt(current);
        if (current.completed_at === null) {
          timer = setTimeout(read, 1000);
          return;
        }
        const keys = await fetch(`${baseUrl}/.well-known/ocss/keys`).then((res) => res.json());
        const checked = await haven.erasures.verify(current, { stewardKey: keys });
        if (!stopped) {
          setVerdict(checked);
        }
      });
    read();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [haven, started.erasureId]);

  useEffect(() => {
    // The family's page is gone: the reader is taken to what replaced it.
    heading.current?.focus();
  }, []);

  const status = receipt === null ? 'reading…' : receipt.completed_at ? 'completed' : 'pending';
  return (
    <section class="card" aria-labelledby="erasure-heading">
      <p class="crumb">
        <a href={href({ view: 'families' })}>← Families</a>
      </p>
      <h2 id="erasure-heading" tabIndex={-1} ref={heading}>
        Erasure receipt
      </h2>
      <p>
        <strong>{started.familyName}</strong> was deleted with everything Haven held about it. The
        receipt says what was erased and released.
      </p>
      <dl class="receipt">
        <dt>Receipt id</dt>
        <dd>
          <code>{started.erasureId}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <span role="status">{status}</span>
        </dd>
        {receipt ? (
          <>
            <dt>Requested</dt>
            <dd>{when(receipt.requested_at)}</dd>
            <dt>Completed</dt>
            <dd>{when(receipt.completed_at)}</dd>
            <dt>Erased rows</dt>
            <dd>
              {Object.entries(receipt.erased)
                .filter(([, count]) => count > 0)
                .map(([table, count]) => `${table}: ${count}`)
                .join(', ') || 'none'}
            </dd>
            <dt>Releases</dt>
            <dd>
              {receipt.releases.length === 0
                ? 'no platform was connected'
                : receipt.releases.map((r) => `${r.platform_id}: ${r.status}`).join(', ')}
            </dd>
            <dt>Signature</dt>
            <dd>
              {verdict === null ? (
                receipt.completed_at ? (
                  'checking…'
                ) : (
                  'signed once every release has ended'
                )
              ) : verdict.valid ? (
                <span class="verified">verified (steward key {verdict.kid})</span>
              ) : (
                <span class="error">not valid: {verdict.reason}</span>
              )}
            </dd>
          </>
        ) : null}
      </dl>
      <ErrorText error={error} />
    </section>
  );
}
