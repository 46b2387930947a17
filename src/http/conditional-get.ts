// Conditional reads (RFC 9110 §13.1.2) for the discovery artifacts: If-None-Match compares
// weakly, may list several entity tags, and `*` matches any current representation.
import { Type } from 'typebox';

export function ifNoneMatchHits(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) {
    return false;
  }
  // What a poller sends back nearly always: the one tag it was given. The list's parse
  // (a regular expression, an array and a replace per tag) is for everything else.
  if (ifNoneMatch === etag) {
    return true;
  }
  if (ifNoneMatch.trim() === '*') {
    return true;
  }
  const tags = ifNoneMatch.match(/(?:W\/)?"[^"]*"/g) ?? [];
  return tags.some((tag) => tag.replace(/^W\//, '') === etag);
}

/**
 * The 304 of a conditional read: typed `undefined` so the handler sends no body at all (a
 * `null` schema would serialise the four bytes `null`).
 */
export const NotModified = (description: string) =>
  Type.Unsafe<undefined>({ type: 'null', description });
