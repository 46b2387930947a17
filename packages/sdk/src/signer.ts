// RFC 9421 HTTP Message Signatures for Haven's signed OCSS verbs, in the one profile Haven's
// verifier accepts (src/ocss/verify-signed-request.ts): a single signature labelled `sig1`,
// Ed25519, covering `@method`, `@target-uri`, `content-digest` and `ocss-spec-version`, with
// the parameters `created`, `keyid`, `alg` and `nonce`. WebCrypto only, so it runs in browsers
// as well as in Node 20+.

/** The OCSS version Haven speaks; it refuses a signed request that names another. */
export const OCSS_SPEC_VERSION = 'OCSS-v1.0-pre';

/** The signature label. Haven accepts exactly one signature, whatever its label. */
const LABEL = 'sig1';
/** Haven refuses a signature that does not cover all four of these. */
const COVERED = ['@method', '@target-uri', 'content-digest', 'ocss-spec-version'] as const;
/** Haven's limit on a string signature parameter (keyid, nonce). */
const MAX_PARAMETER_LENGTH = 1024;
/** The methods the Fetch standard uppercases before sending; any other goes out as written. */
const NORMALIZED_METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'];

/**
 * WebCrypto's key type, named through `crypto.subtle` so that it reads the same under the
 * DOM's types (browsers) and Node's.
 */
export type WebCryptoKey =
  Awaited<ReturnType<typeof crypto.subtle.generateKey>> extends infer K
    ? K extends { privateKey: infer P }
      ? P
      : never
    : never;

/** An Ed25519 private key as a JWK (RFC 8037): WebCrypto needs `x` beside `d`. */
export interface Ed25519PrivateJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  d: string;
  x: string;
  kid?: string;
}

export interface Signer {
  /** The key id on Haven's trust list, e.g. `did:ocss:example#<kid>`. */
  keyId: string;
  /**
   * The Ed25519 private key: a PKCS#8 PEM string (`-----BEGIN PRIVATE KEY-----`), a WebCrypto
   * CryptoKey usable for `sign`, or an OKP JWK with `crv: "Ed25519"`, `d` and `x`.
   */
  privateKey: string | WebCryptoKey | Ed25519PrivateJwk;
}

export interface SignableRequest {
  method: string;
  /** The absolute URL the request is sent to: Haven's PUBLIC_BASE_URL + path and query. */
  url: string;
  /** The headers the caller sends; only `OCSS-Spec-Version` (any case) is read. */
  headers: Record<string, string>;
  /** The exact body sent, which the Content-Digest covers as UTF-8. */
  body: string;
}

export interface SignOptions {
  /** The signature's creation time; default now. Haven allows ±300 s around its clock. */
  created?: Date;
  /** Default: 16 random bytes, base64url. Haven refuses a nonce it has already seen. */
  nonce?: string;
}

/**
 * The headers to add to the request: `Content-Digest`, `Signature-Input`, `Signature`, and
 * `OCSS-Spec-Version` when the caller's headers lack it. They replace any same-named headers
 * the caller set (a second Content-Digest would be joined to this one and fail).
 */
export async function signRequest(
  signer: Signer,
  request: SignableRequest,
  options: SignOptions = {},
): Promise<Record<string, string>> {
  const added: Record<string, string> = {};
  let specVersion = headerValue(request.headers, 'ocss-spec-version');
  if (specVersion === undefined) {
    specVersion = OCSS_SPEC_VERSION;
    added['OCSS-Spec-Version'] = specVersion;
  }
  const contentDigest = await sha256ContentDigest(request.body);
  const created = toUnixSeconds(options.created ?? new Date());
  const nonce = options.nonce ?? randomNonce();

  const signatureParams =
    `(${COVERED.map((name) => `"${name}"`).join(' ')})` +
    `;created=${created}` +
    `;keyid=${sfString('keyid', signer.keyId)}` +
    ';alg="ed25519"' +
    `;nonce=${sfString('nonce', nonce)}`;
  const componentValues = [
    normalizeMethod(request.method),
    targetUri(request.url),
    contentDigest,
    specVersion,
  ];
  const lines = COVERED.map((name, i) => `"${name}": ${singleLine(name, componentValues[i])}`);
  lines.push(`"@signature-params": ${signatureParams}`);
  const base = new TextEncoder().encode(lines.join('\n'));

  const key = await importSigningKey(signer.privateKey);
  const signature = new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, key, base));
  return {
    ...added,
    'Content-Digest': contentDigest,
    'Signature-Input': `${LABEL}=${signatureParams}`,
    Signature: `${LABEL}=:${toBase64(signature)}:`,
  };
}

/** Case-insensitive, trimmed like Haven reads it (RFC 9110 §5.3). */
function headerValue(headers: Record<string, string>, name: string): string | undefined {
  for (const [field, value] of Object.entries(headers)) {
    if (field.toLowerCase() === name) {
      return value.trim();
    }
  }
  return undefined;
}

/** `@method` must be what goes on the wire, and Haven compares it case-sensitively. */
function normalizeMethod(method: string): string {
  const upper = method.toUpperCase();
  return NORMALIZED_METHODS.includes(upper) ? upper : method;
}

/**
 * `@target-uri` as Haven rebuilds it: PUBLIC_BASE_URL + the request target that is sent. The
 * WHATWG parse is what fetch applies before sending; the fragment never leaves the client.
 */
function targetUri(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`signRequest needs an absolute URL, got ${JSON.stringify(url)}`);
  }
  parsed.hash = '';
  return parsed.href;
}

/** A CR or LF in a component value would add lines to the signature base: Haven refuses it. */
function singleLine(name: string, value: string | undefined): string {
  if (value === undefined || /[\r\n]/.test(value)) {
    throw new TypeError(`${name} must be a single line`);
  }
  return value;
}

function toUnixSeconds(date: Date): number {
  const ms = date.getTime();
  if (!Number.isFinite(ms)) {
    throw new TypeError('created is not a valid date');
  }
  return Math.floor(ms / 1000);
}

/** An RFC 8941 sf-string, serialized canonically: Haven re-serializes what it receives. */
function sfString(name: string, value: string): string {
  if (value === '' || value.length > MAX_PARAMETER_LENGTH || !/^[\x20-\x7e]*$/.test(value)) {
    throw new TypeError(`${name} must be 1-${MAX_PARAMETER_LENGTH} printable ASCII characters`);
  }
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/** Nonces are replay-protected by Haven, so one is always sent: 128 random bits. */
function randomNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return toBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** RFC 9530 Content-Digest of the UTF-8 body (the bytes fetch sends for a string body). */
async function sha256ContentDigest(body: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(body));
  return `sha-256=:${toBase64(new Uint8Array(digest))}:`;
}

async function importSigningKey(privateKey: Signer['privateKey']): Promise<WebCryptoKey> {
  if (typeof privateKey === 'string') {
    return crypto.subtle.importKey('pkcs8', pemToDer(privateKey), 'Ed25519', false, ['sign']);
  }
  // A JWK has no `usages`; every CryptoKey has them.
  if ('usages' in privateKey) {
    if (privateKey.algorithm.name !== 'Ed25519' || !privateKey.usages.includes('sign')) {
      throw new TypeError('the CryptoKey must be an Ed25519 private key usable for sign');
    }
    return privateKey;
  }
  if (privateKey.kty !== 'OKP' || privateKey.crv !== 'Ed25519' || !privateKey.d) {
    throw new TypeError('the JWK must be an Ed25519 private key (kty OKP, crv Ed25519, d, x)');
  }
  return crypto.subtle.importKey('jwk', privateKey, 'Ed25519', false, ['sign']);
}

function pemToDer(pem: string): ArrayBuffer {
  const match = /-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\s]+)-----END PRIVATE KEY-----/.exec(pem);
  if (!match?.[1]) {
    // Encrypted, OpenSSH or SEC1 keys would need a passphrase or another parser.
    throw new TypeError('the PEM must be an unencrypted PKCS#8 key (BEGIN PRIVATE KEY)');
  }
  return fromBase64(match[1].replace(/\s+/g, '')).buffer;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) {
    binary += String.fromCharCode(byte);
  }
  return btoa(binary);
}

function fromBase64(base64: string): Uint8Array<ArrayBuffer> {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    bytes[i] = binary.charCodeAt(i);
  }
  return bytes;
}
