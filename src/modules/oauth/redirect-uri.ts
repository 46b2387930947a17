// The client's redirect_uri: what is accepted (CONTRACT.md §6: an absolute http(s) URL) and
// how the authorization response is added to it (RFC 6749 §4.1.2: the URI's own query is
// kept; the response parameters are appended to it).
import { BadRequestError } from '../../http/errors.js';

export const REDIRECT_URI_MESSAGE = 'redirect_uri must be an absolute http(s) URL';

/**
 * `http(s)://` and a host, written out: the WHATWG parser would also accept `http:///cb`,
 * `http:cb` or `http:\\host` (all meaning http://cb/), and strip tabs, newlines and outer
 * spaces; an RFC 3986 absolute URL has none of these.
 */
const ABSOLUTE_HTTP = /^https?:\/\/[^/\\?#]/i;
/** Visible characters only: no space, no control character (C0, DEL or C1). */
const VISIBLE = /^[!-~\u00a0-\u{10ffff}]+$/u;

/** Throws 400 for anything a browser should not be sent to (relative, javascript:, …). */
export function parseRedirectUri(raw: string): URL {
  if (!ABSOLUTE_HTTP.test(raw) || !VISIBLE.test(raw)) {
    throw new BadRequestError(REDIRECT_URI_MESSAGE);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadRequestError(REDIRECT_URI_MESSAGE);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new BadRequestError(REDIRECT_URI_MESSAGE);
  }
  // RFC 6749 §3.1.2: the redirection endpoint URI MUST NOT include a fragment.
  if (raw.includes('#')) {
    throw new BadRequestError('redirect_uri must not include a fragment');
  }
  return url;
}

/**
 * The redirect target with `params` appended. The existing query is kept byte for byte (not
 * re-serialised through URLSearchParams, which would rewrite `%20` as `+` and `a` as `a=`),
 * and values are percent-encoded (`%20`, never `+`), which form decoders and plain
 * `decodeURIComponent` both read back unchanged.
 */
export function withResponseParams(
  redirectUri: URL,
  params: Record<string, string | undefined>,
): string {
  const added = Object.entries(params)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join('&');
  const target = new URL(redirectUri.href);
  const existing = target.search.slice(1);
  target.search = existing === '' ? added : `${existing}&${added}`;
  return target.href;
}
