// Small pieces every screen shares: a section with its heading, the API's error where the
// action was, dates as people read them, and one way to run an action with its state.
import type { ComponentChildren } from 'preact';
import { useCallback, useState } from 'preact/hooks';
import { isSignedOut, messageOf } from './session.js';

export function Section(props: { title: string; id: string; children: ComponentChildren }) {
  return (
    <section aria-labelledby={`${props.id}-heading`} class="card">
      <h2 id={`${props.id}-heading`}>{props.title}</h2>
      {props.children}
    </section>
  );
}

export function ErrorText(props: { error: string | null }) {
  return props.error ? (
    <p class="error" role="alert">
      {props.error}
    </p>
  ) : null;
}

export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

/** Signs the user out on a 401, from wherever it comes. */
export type OnSignedOut = (message: string) => void;

/**
 * Runs an action: `busy` while it runs, `error` with the API's message if it fails (a 401
 * signs out instead).
 */
export function useAction(onSignedOut: OnSignedOut) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(
    async (action: () => Promise<void>) => {
      setBusy(true);
      setError(null);
      try {
        await action();
      } catch (failure) {
        if (isSignedOut(failure)) {
          onSignedOut('Your session has expired or was refused: sign in again.');
        } else {
          setError(messageOf(failure));
        }
      } finally {
        setBusy(false);
      }
    },
    [onSignedOut],
  );
  return { busy, error, run, setError };
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

/** A table header row: the columns, then an unlabelled-looking (but named) actions column. */
export function HeaderRow(props: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {props.columns.map((column) => (
          <th key={column} scope="col">
            {column}
          </th>
        ))}
        <th scope="col">
          <span class="visually-hidden">Actions</span>
        </th>
      </tr>
    </thead>
  );
}

/** A button whose action runs only once the user confirms it (revocations). */
export function ConfirmButton(props: {
  label: string;
  question: string;
  disabled: boolean;
  onConfirmed: () => void;
}) {
  return (
    <button
      type="button"
      disabled={props.disabled}
      onClick={() => {
        if (window.confirm(props.question)) {
          props.onConfirmed();
        }
      }}
    >
      {props.label}
    </button>
  );
}
