// The RFC 9421 §2.5 signature base: one `"<component>": <value>` line per covered component,
// in the signer's order, then `"@signature-params": <params>`, joined by LF with no final LF.
import { serializeString } from 'structured-headers';
import { combinedFields, type HeaderMap } from './http-fields.js';
import { OcssError } from './ocss-error.js';

/** The request as the verifier sees it. `targetUri` is the URL the signer called. */
export interface SignedRequest {
  method: string;
  targetUri: string;
  headers: HeaderMap;
  body: Buffer | undefined;
}

/**
 * `components` are names already vetted by `parseReceivedSignature` (derived ones from
 * DERIVED_COMPONENTS, lowercase field names otherwise); `signatureParams` is the
 * serialized inner list. A component the request cannot supply is `signature_invalid`.
 * `fields`: the request's fields as `combinedFields` reads them, when the caller has them.
 */
export function buildSignatureBase(
  request: Pick<SignedRequest, 'method' | 'targetUri' | 'headers'>,
  components: readonly string[],
  signatureParams: string,
  fields: ReadonlyMap<string, string> = combinedFields(request.headers),
): string {
  const lines = components.map((name) => {
    const value = componentValue(request, fields, name);
    // A value carrying CR or LF could forge further lines of the base.
    if (/[\r\n]/.test(value)) {
      throw OcssError.signatureInvalid(`covered component ${name} contains a line break`);
    }
    return `${serializeString(name)}: ${value}`;
  });
  lines.push(`"@signature-params": ${signatureParams}`);
  return lines.join('\n');
}

function componentValue(
  request: Pick<SignedRequest, 'method' | 'targetUri'>,
  fields: ReadonlyMap<string, string>,
  name: string,
): string {
  if (!name.startsWith('@')) {
    const value = fields.get(name);
    if (value === undefined) {
      throw OcssError.signatureInvalid(`covered field ${name} is missing from the request`);
    }
    return value;
  }
  if (name === '@method') {
    // The method is case-sensitive (RFC 9110 §9.1): used exactly as received.
    return request.method;
  }
  if (name === '@target-uri') {
    return request.targetUri;
  }
  const url = parseTargetUri(request.targetUri);
  switch (name) {
    case '@authority':
      // WHATWG `host` is already normalized: lowercase, default port dropped (RFC 9421 §2.2.3).
      return url.host;
    case '@scheme':
      return url.protocol.slice(0, -1);
    case '@request-target':
      return `${url.pathname}${url.search}`;
    case '@path':
      return url.pathname === '' ? '/' : url.pathname;
    case '@query':
      // An absent (or empty) query is the lone `?` (RFC 9421 §2.2.7).
      return url.search === '' ? '?' : url.search;
    default:
      throw OcssError.signatureInvalid(`derived component ${name} is not supported`);
  }
}

function parseTargetUri(targetUri: string): URL {
  try {
    return new URL(targetUri);
  } catch {
    throw OcssError.signatureInvalid('the target URI is not an absolute URL');
  }
}
