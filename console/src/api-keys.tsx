// API keys of the selected org: create (name, test/live, scopes, expiry), the secret shown
// once with a copy button, the list, revoke (confirmed) and regenerate.
import type { Haven, Result } from '@haven/sdk';
import { useEffect, useState } from 'preact/hooks';
import { SCOPES } from '../../src/auth/scopes.js';
import {
  ConfirmButton,
  Empty,
  ErrorText,
  HeaderRow,
  type OnSignedOut,
  Section,
  useAction,
  when,
} from './ui.js';

type Key = Result<'listApiKeys'>[number];

function NewSecret(props: { label: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <section aria-label={props.label} class="secret">
      <p>Copy it now: it is shown once and Haven keeps only its hash.</p>
      <code class="secret-value">{props.secret}</code>
      <div class="row">
        <button
          type="button"
          onClick={() =>
            navigator.clipboard?.writeText(props.secret).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={props.onDone}>
          Done
        </button>
      </div>
    </section>
  );
}

export { NewSecret };

export function ApiKeys(props: { haven: Haven; orgId: string; onSignedOut: OnSignedOut }) {
  const { haven, orgId } = props;
  const [keys, setKeys] = useState<Key[] | null>(null);
  const [name, setName] = useState('');
  const [environment, setEnvironment] = useState<'test' | 'live'>('test');
  const [scopes, setScopes] = useState<string[]>([]);
  const [expiresInDays, setExpiresInDays] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const { busy, error, run } = useAction(props.onSignedOut);
  const reload = async () => setKeys(await haven.apiKeys.list(orgId));
  useEffect(() => {
    setKeys(null);
    setSecret(null);
    void run(reload);
  }, [orgId]);

  return (
    <Section title="API keys" id="keys">
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void run(async () => {
            const days = Number(expiresInDays);
            const created = await haven.apiKeys.create(orgId, {
              name: name.trim(),
              environment,
              scopes,
              ...(expiresInDays && days > 0
                ? { expires_at: new Date(Date.now() + days * 86_400_000).toISOString() }
                : {}),
            });
            setSecret(created.key);
            setName('');
            await reload();
          });
        }}
      >
        <div class="row">
          <label for="key-name">Key name</label>
          <input
            id="key-name"
            value={name}
            onInput={(event) => setName((event.target as HTMLInputElement).value)}
          />
        </div>
        <fieldset>
          <legend>Environment</legend>
          {(['test', 'live'] as const).map((value) => (
            <label key={value} class="choice">
              <input
                type="radio"
                name="environment"
                value={value}
                checked={environment === value}
                onChange={() => setEnvironment(value)}
              />
              {value}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Scopes (none checked: every scope)</legend>
          <div class="scopes">
            {SCOPES.map((scope) => (
              <label key={scope} class="choice">
                <input
                  type="checkbox"
                  checked={scopes.includes(scope)}
                  onChange={(event) =>
                    setScopes((current) =>
                      (event.target as HTMLInputElement).checked
                        ? [...current, scope]
                        : current.filter((s) => s !== scope),
                    )
                  }
                />
                {scope}
              </label>
            ))}
          </div>
        </fieldset>
        <div class="row">
          <label for="key-expiry">Expires in (days, empty: never)</label>
          <input
            id="key-expiry"
            inputMode="numeric"
            value={expiresInDays}
            onInput={(event) => setExpiresInDays((event.target as HTMLInputElement).value)}
          />
        </div>
        <button type="submit" class="primary" disabled={busy}>
          Create key
        </button>
      </form>
      <ErrorText error={error} />
      {secret ? <NewSecret label="New key" secret={secret} onDone={() => setSecret(null)} /> : null}
      {keys === null ? (
        <p class="loading">Loading keys…</p>
      ) : keys.length === 0 ? (
        <Empty>No key yet.</Empty>
      ) : (
        <div class="scroll">
          <table>
            <HeaderRow
              columns={[
                'Name',
                'Prefix',
                'Environment',
                'Scopes',
                'Created',
                'Last used',
                'Status',
              ]}
            />
            <tbody>
              {keys.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>
                    <code>{key.key_prefix}</code>
                  </td>
                  <td>{key.environment}</td>
                  <td>{key.scopes.length === 0 ? 'every scope' : key.scopes.join(', ')}</td>
                  <td>{when(key.created_at)}</td>
                  <td>{when(key.last_used_at)}</td>
                  <td>{key.revoked_at ? 'revoked' : 'active'}</td>
                  <td class="actions">
                    {key.revoked_at ? null : (
                      <>
                        <ConfirmButton
                          label="Revoke"
                          question={`Revoke ${key.name}? Its next use is refused.`}
                          disabled={busy}
                          onConfirmed={() =>
                            run(async () => {
                              await haven.apiKeys.revoke(orgId, key.id);
                              await reload();
                            })
                          }
                        />
                        <button
                          type="button"
                          disabled={busy}
                          onClick={() =>
                            run(async () => {
                              const renewed = await haven.apiKeys.regenerate(orgId, key.id);
                              setSecret(renewed.key);
                              await reload();
                            })
                          }
                        >
                          Regenerate
                        </button>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}
