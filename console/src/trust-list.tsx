// The trust list: its entries, and its signature verified here in the browser against the
// keys Haven publishes (/.well-known/ocss/keys), with WebCrypto's Ed25519: the console trusts
// the list only as far as the math does.
import canonicalize from 'canonicalize';
import { useEffect, useState } from 'preact/hooks';
import { baseUrl } from './session.js';
import { Empty, ErrorText, Section } from './ui.js';

interface Entry {
  did: string;
  tier: string;
  status: string;
  roles: string[];
  sig: string;
}

interface Jwk {
  kid?: string;
  kty: string;
  crv: string;
  x: string;
}

type Verdict = { verified: true; keyId: string } | { verified: false; reason: string };

function bytesOf(sig: string): Uint8Array<ArrayBuffer> {
  if (!sig.startsWith('ed25519:')) {
    throw new Error(`the signature is not ed25519: ${sig.slice(0, 20)}`);
  }
  const base64 = sig.slice('ed25519:'.length).replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

async function verifies(key: CryptoKey, sig: string, text: string): Promise<boolean> {
  return crypto.subtle.verify('Ed25519', key, bytesOf(sig), new TextEncoder().encode(text));
}

async function check(
  envelopeText: string,
  keys: Jwk[],
): Promise<{ verdict: Verdict; entries: Entry[] }> {
  const envelope = JSON.parse(envelopeText) as {
    document: string;
    key_id: string;
    alg: string;
    sig: string;
  };
  const document = JSON.parse(envelope.document) as { entries: Entry[] };
  const fail = (reason: string) => ({
    verdict: { verified: false as const, reason },
    entries: document.entries,
  });
  if (envelope.alg !== 'ed25519') {
    return fail(`unexpected algorithm ${envelope.alg}`);
  }
  if (canonicalize(document) !== envelope.document) {
    return fail('the document is not in canonical (JCS) form');
  }
  const kid = envelope.key_id.split('#')[1];
  const jwk = keys.find((key) => key.kid === kid);
  if (!jwk) {
    return fail(`the signing key ${envelope.key_id} is not among the published keys`);
  }
  const key = await crypto.subtle.importKey(
    'jwk',
    { kty: jwk.kty, crv: jwk.crv, x: jwk.x },
    'Ed25519',
    false,
    ['verify'],
  );
  if (!(await verifies(key, envelope.sig, envelope.document))) {
    return fail('the list signature does not verify');
  }
  for (const entry of document.entries) {
    const { sig, ...unsigned } = entry;
    if (!(await verifies(key, sig, canonicalize(unsigned) as string))) {
      return fail(`the signature of entry ${entry.did} does not verify`);
    }
  }
  return { verdict: { verified: true, keyId: envelope.key_id }, entries: document.entries };
}

export function TrustList() {
  const [result, setResult] = useState<{ verdict: Verdict; entries: Entry[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    Promise.all([
      fetch(`${baseUrl}/.well-known/ocss/trust-list`).then((res) => res.text()),
      fetch(`${baseUrl}/.well-known/ocss/keys`).then(
        (res) => res.json() as Promise<{ keys: Jwk[] }>,
      ),
    ])
      .then(([list, keys]) => check(list, keys.keys))
      .then(setResult, (failure: unknown) =>
        setError(failure instanceof Error ? failure.message : String(failure)),
      );
  }, []);
  return (
    <Section title="Trust list" id="trust">
      <ErrorText error={error} />
      {result === null ? (
        error ? null : (
          <p class="loading">Verifying the trust list…</p>
        )
      ) : (
        <>
          <p class={result.verdict.verified ? 'verified' : 'error'} role="status">
            {result.verdict.verified
              ? `Signature verified (${result.verdict.keyId})`
              : `Signature not verified: ${result.verdict.reason}`}
          </p>
          {result.entries.length === 0 ? (
            <Empty>The list has no entry.</Empty>
          ) : (
            <div class="scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">DID</th>
                    <th scope="col">Tier</th>
                    <th scope="col">Status</th>
                    <th scope="col">Roles</th>
                  </tr>
                </thead>
                <tbody>
                  {result.entries.map((entry) => (
                    <tr key={entry.did}>
                      <td>
                        <code>{entry.did}</code>
                      </td>
                      <td>{entry.tier}</td>
                      <td>{entry.status}</td>
                      <td>{entry.roles.join(', ')}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </Section>
  );
}
