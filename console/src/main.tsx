// The Haven developer console (CONTRACT.md §10.3): sign in, then two planes, all through the
// public API (@haven/sdk): Developers (organizations, API keys, usage, MCP tokens, webhooks,
// the trust list) and the product plane (families, their children, policies, enforcement,
// devices, and the audit log). Each view has its own URL fragment (router.ts).
import type { Haven } from '@haven/sdk';
import { render } from 'preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { ApiKeys } from './api-keys.js';
import { OrgAuditLog } from './audit-log.js';
import { FamiliesList } from './families-list.js';
import { FamilyPage } from './family-page.js';
import { McpTokens } from './mcp-tokens.js';
import { Organizations } from './organizations.js';
import { PolicyPage } from './policy-page.js';
import { href, type Route, useRoute } from './router.js';
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

/** The console's navigation landmark: one link a plane, the current one marked. */
function Navigation(props: { route: Route }) {
  const current = (view: Route['view'][]) =>
    view.includes(props.route.view) ? ('page' as const) : undefined;
  return (
    <nav aria-label="Console" class="planes">
      <a href={href({ view: 'developers' })} aria-current={current(['developers'])}>
        Developers
      </a>
      <a href={href({ view: 'families' })} aria-current={current(['families', 'family', 'policy'])}>
        Families
      </a>
      <a href={href({ view: 'audit-log' })} aria-current={current(['audit-log'])}>
        Audit log
      </a>
    </nav>
  );
}

function Console(props: { haven: Haven; onSignOut: (message?: string) => void }) {
  const [userId, setUserId] = useState<string | null>(null);
  const [orgId, setOrgId] = useState<string | null>(null);
  const route = useRoute();
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
      <Navigation route={route} />
      <main>
        {route.view === 'families' && <FamiliesList haven={haven} onSignedOut={onSignOut} />}
        {route.view === 'family' && (
          <FamilyPage haven={haven} onSignedOut={onSignOut} familyId={route.familyId} />
        )}
        {route.view === 'policy' && (
          <PolicyPage
            haven={haven}
            onSignedOut={onSignOut}
            familyId={route.familyId}
            childId={route.childId}
          />
        )}
        {route.view === 'audit-log' && (
          <OrgAuditLog haven={haven} onSignedOut={onSignOut} orgId={orgId} onSelectOrg={setOrgId} />
        )}
        {route.view === 'developers' && (
          <Developers haven={haven} onSignOut={onSignOut} orgId={orgId} onSelectOrg={setOrgId} />
        )}
      </main>
    </>
  );
}

/** Today's developer sections, on one page. */
function Developers(props: {
  haven: Haven;
  onSignOut: (message?: string) => void;
  orgId: string | null;
  onSelectOrg: (orgId: string | null) => void;
}) {
  const { haven, onSignOut, orgId } = props;
  return (
    <>
      <Organizations
        haven={haven}
        onSignedOut={onSignOut}
        orgId={orgId}
        onSelect={props.onSelectOrg}
      />
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
