// RFC 8785 (JCS) canonical JSON text: the bytes the steward signs. `canonicalize` quietly
// drops or rewrites what JSON cannot hold (undefined members vanish, undefined array items
// become null, Maps become {}, a function writes the word `undefined`); a signed document
// must never differ from the value it was built from, so those are refused here instead.
import canonicalize from 'canonicalize';
import { OcssError } from './ocss-error.js';

export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** The RFC 8785 text of `value`; throws `malformed` naming the first unrepresentable part. */
export function canonicalJson(value: JsonValue): string {
  assertRepresentable(value, '$', new Set());
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (error) {
    throw OcssError.malformed(`cannot canonicalize JSON: ${(error as Error).message}`);
  }
  if (text === undefined) {
    throw OcssError.malformed('cannot canonicalize JSON: no JSON text for the value');
  }
  return text;
}

function assertRepresentable(value: unknown, path: string, ancestors: Set<object>): void {
  if (value === null || typeof value === 'boolean') {
    return;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) {
      refuse(path, `${value} is not a JSON number`);
    }
    return;
  }
  if (typeof value === 'string') {
    if (hasLoneSurrogate(value)) {
      refuse(path, 'a string holds a lone UTF-16 surrogate');
    }
    return;
  }
  if (typeof value !== 'object') {
    refuse(path, `${typeof value} is not a JSON value`);
  }
  const object = value as object;
  if (ancestors.has(object)) {
    refuse(path, 'circular reference');
  }
  ancestors.add(object);
  if (Array.isArray(object)) {
    for (let index = 0; index < object.length; index++) {
      if (!(index in object)) {
        refuse(`${path}[${index}]`, 'a hole in a sparse array');
      }
      assertRepresentable(object[index], `${path}[${index}]`, ancestors);
    }
  } else {
    const prototype = Object.getPrototypeOf(object);
    if (prototype !== Object.prototype && prototype !== null) {
      // Date, Map, class instances...: their JSON form is not the value itself.
      refuse(path, `${object.constructor?.name ?? 'object'} is not a plain JSON object`);
    }
    for (const [key, member] of Object.entries(object)) {
      if (hasLoneSurrogate(key)) {
        refuse(path, 'a member name holds a lone UTF-16 surrogate');
      }
      assertRepresentable(member, `${path}.${key}`, ancestors);
    }
  }
  ancestors.delete(object);
}

function refuse(path: string, reason: string): never {
  throw OcssError.malformed(`cannot canonicalize JSON at ${path}: ${reason}`);
}

function hasLoneSurrogate(text: string): boolean {
  return /\p{Surrogate}/u.test(text);
}
