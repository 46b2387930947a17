// The work any server must do for the bench's signed bulk read before it can answer, done
// bare for the `same verification` comparator (bench/same-bytes-server.mjs): read the body,
// check it against its Content-Digest (SHA-256), parse it as JSON, build the RFC 9421
// signature base of the four components the bench's advisor signs, and verify the request's
// Ed25519 signature with the advisor's key on libuv's pool (as Haven does). No key lookup,
// no replay window, no rate limit, no structured-field parser: the least a server does.
import { createHash, createPublicKey, verify } from 'node:crypto';

const COMPONENTS = '("@method" "@target-uri" "content-digest" "ocss-spec-version")';

/** `(request) => Promise<boolean>`: whether the request's body and signature check out. */
export function signedRequestCheck(publicKeyX, targetUri) {
  const key = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: publicKeyX },
    format: 'jwk',
  });
  return async (request) => {
    const body = await new Promise((resolve, reject) => {
      const chunks = [];
      request.on('data', (chunk) => chunks.push(chunk));
      request.on('end', () => resolve(Buffer.concat(chunks)));
      request.on('error', reject);
    });
    const digest = `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
    // One signature, whatever its label: `label=(...)` and `label=:base64:`.
    const input = request.headers['signature-input'] ?? '';
    const signature = request.headers.signature ?? '';
    const label = input.slice(0, input.indexOf('='));
    if (
      request.headers['content-digest'] !== digest ||
      !label ||
      !input.startsWith(`${label}=${COMPONENTS}`) ||
      !signature.startsWith(`${label}=:`)
    ) {
      return false;
    }
    JSON.parse(body.toString('utf8'));
    const base = [
      `"@method": ${request.method}`,
      `"@target-uri": ${targetUri}`,
      `"content-digest": ${digest}`,
      `"ocss-spec-version": ${request.headers['ocss-spec-version']}`,
      `"@signature-params": ${input.slice(label.length + 1)}`,
    ].join('\n');
    const bytes = Buffer.from(signature.slice(label.length + 2, -1), 'base64');
    return new Promise((resolve, reject) =>
      verify(null, Buffer.from(base), key, bytes, (error, valid) =>
        error ? reject(error) : resolve(valid),
      ),
    );
  };
}
