// The Haven developer console (CONTRACT.md §10.3): sign in, then organizations, API keys,
// usage, MCP tokens, webhooks and the trust list, all through the public API (@haven/sdk).
import type { Haven } from '@haven/sdk';
import { render } from 'preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { ApiKeys } from './api-keys.js';
import { McpTokens } from './mcp-tokens.js';
import { Organizations } from './organizations.js';
import { anonymousClient, baseUrl, clientFor, storedToken, storeToken } from './session.js';
import { SignIn } from './sign-in.js';
import { TrustList } from './trust-list.js';
import { Empty, Section } from './ui.js';
import { Usage } from './usage.js';
import { Webhooks } from './webhooks.js';

type Environment = 'sandbox' | 'production' | undefined;

function useEnvironment(): Environment {
  const [environment, setEnvironment] = useState<Environment>(undefined);
  useEffect(() => {
    fetch(`${baseUrl}/health`)
      .then((res) => res.json() as Promise<{ environment?: string }>)
      .then((health) => setEnvironment(health.environment === 'sandbox' ? 'sandbox' : 'production'))
      .catch(() => setEnvironment('production'));
  }, []);
  return environment;
}

function Console(props: { haven: Haven; onSignOut: (message?: string) => void }) {
  const [userId, setUserId] = useState<string | null>(null);
  const [orgId, setOrgId] = useState<string | null>(null);
  const { haven, onSignOut } = props;
  useEffect(() => {
    haven.auth.me().then(
      (me) => setUserId(me.id),
      () => onSignOut('Your session has expired or was refused: sign in again.'),
    );
  }, [haven, onSignOut]);
  if (userId === null) {
    return <p class="loading">Checking your session…</p>;
  }
  return (
    <>
      <header class="top">
        <h1>Haven console</h1>
        <p class="who">
          Signed in as <code>{userId}</code>
        </p>
        <button type="button" onClick={() => onSignOut()}>
          Sign out
        </button>
      </header>
      <main>
        <Organizations haven={haven} onSignedOut={onSignOut} orgId={orgId} onSelect={setOrgId} />
        {orgId ? (
          <>
            <ApiKeys haven={haven} onSignedOut={onSignOut} orgId={orgId} />
            <Usage haven={haven} onSignedOut={onSignOut} orgId={orgId} />
          </>
        ) : (
          <>
            <Section title="API keys" id="keys">
              <Empty>Keys belong to an organization: create one above.</Empty>
            </Section>
            <Section title="Usage" id="usage">
              <Empty>Usage is counted per organization: create one above.</Empty>
            </Section>
          </>
        )}
        <McpTokens haven={haven} onSignedOut={onSignOut} />
        <Webhooks haven={haven} onSignedOut={onSignOut} />
        <TrustList />
      </main>
    </>
  );
}

function App() {
  const environment = useEnvironment();
  const [token, setToken] = useState<string | null>(storedToken());
  const [notice, setNotice] = useState<string | null>(null);
  const haven = useMemo(() => (token ? clientFor(token) : null), [token]);
  const signIn = useCallback((newToken: string) => {
    storeToken(newToken);
    setNotice(null);
    setToken(newToken);
  }, []);
  const signOut = useCallback((message?: string) => {
    storeToken(null);
    setNotice(message ?? null);
    setToken(null);
  }, []);
  if (environment === undefined) {
    return <p class="loading">Loading the console…</p>;
  }
  if (!haven) {
    return (
      <SignIn
        sandbox={environment === 'sandbox'}
        anonymous={anonymousClient()}
        notice={notice}
        onSignedIn={signIn}
      />
    );
  }
  return <Console haven={haven} onSignOut={signOut} />;
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
