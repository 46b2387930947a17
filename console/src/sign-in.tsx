// Sign-in: the sandbox mints a session in one click; any deployment takes a pasted token.
import type { Haven } from '@haven/sdk';
import { useState } from 'preact/hooks';
import { messageOf } from './session.js';
import { ErrorText } from './ui.js';

export function SignIn(props: {
  sandbox: boolean;
  anonymous: Haven;
  notice: string | null;
  onSignedIn: (token: string) => void;
}) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function sandboxSession() {
    setBusy(true);
    setError(null);
    try {
      const minted = await props.anonymous.sandbox.createSessionToken();
      props.onSignedIn(minted.access_token);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="sign-in card">
      <h1>Haven console</h1>
      {props.notice ? (
        <p class="notice" role="status">
          {props.notice}
        </p>
      ) : null}
      {props.sandbox ? (
        <p>
          <button type="button" class="primary" disabled={busy} onClick={sandboxSession}>
            Sign in to the sandbox
          </button>
        </p>
      ) : null}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (token.trim() === '') {
            setError('Paste a session token first.');
            return;
          }
          props.onSignedIn(token.trim());
        }}
      >
        <label for="session-token">Session token</label>
        <textarea
          id="session-token"
          rows={3}
          value={token}
          onInput={(event) => setToken((event.target as HTMLTextAreaElement).value)}
          placeholder="eyJhbGciOiJSUzI1NiIs…"
        />
        <button type="submit">Sign in</button>
      </form>
      <ErrorText error={error} />
    </main>
  );
}
