import { describe, expect, it } from 'vitest';
import { checkContentDigest, contentDigestFor, parseContentDigest } from './content-digest.js';
import { OcssError } from './ocss-error.js';

// RFC 9421 Appendix B.2: the test request's body and its Content-Digest.
const RFC_BODY = Buffer.from('{"hello": "world"}');
const RFC_DIGEST =
  'sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:';

function failure(run: () => void): OcssError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(OcssError);
    return error as OcssError;
  }
  throw new Error('expected a failure');
}

describe('Content-Digest', () => {
  it('accepts the RFC 9421 B.2 sha-512 digest and writes the same field', () => {
    expect(() => checkContentDigest(RFC_DIGEST, RFC_BODY)).not.toThrow();
    expect(contentDigestFor(RFC_BODY, 'sha-512')).toBe(RFC_DIGEST);
  });

  it('accepts sha-256, both algorithms together, and an empty body', () => {
    const sha256 = contentDigestFor(RFC_BODY);
    expect(sha256).toMatch(/^sha-256=:[A-Za-z0-9+/]{43}=:$/);
    expect(() => checkContentDigest(sha256, RFC_BODY)).not.toThrow();
    expect(() => checkContentDigest(`${sha256}, ${RFC_DIGEST}`, RFC_BODY)).not.toThrow();
    expect(() => checkContentDigest(contentDigestFor(Buffer.alloc(0)), undefined)).not.toThrow();
    expect([...parseContentDigest(`${sha256}, ${RFC_DIGEST}`).keys()]).toEqual([
      'sha-256',
      'sha-512',
    ]);
  });

  it('fails on a body that differs by one byte', () => {
    const changed = Buffer.from(RFC_BODY);
    changed[3] = (changed[3] ?? 0) ^ 1;
    const error = failure(() => checkContentDigest(RFC_DIGEST, changed));
    expect(error.class).toBe('signature_invalid');
    expect(error.message).toBe('Content-Digest sha-512 does not match the body');
  });

  it('fails when any one of several digests is wrong', () => {
    const wrong256 = contentDigestFor(Buffer.from('other'));
    expect(failure(() => checkContentDigest(`${wrong256}, ${RFC_DIGEST}`, RFC_BODY)).class).toBe(
      'signature_invalid',
    );
  });

  it.each([
    ['an unsupported algorithm', 'md5=:AAAAAAAAAAAAAAAAAAAAAA==:'],
    ['a supported one beside an unsupported one', `${RFC_DIGEST}, sha3-256=:AAAA:`],
    ['no member', ''],
    ['not a dictionary', 'sha-256'],
    ['a token instead of bytes', 'sha-256=abc'],
    ['a wrong-length digest', 'sha-256=:AAAA:'],
    ['a digest inner list', 'sha-256=(:AAAA:)'],
    ['unparsable bytes', 'sha-256=:not base64:'],
  ])('fails on %s', (_name, field) => {
    expect(failure(() => checkContentDigest(field, RFC_BODY)).class).toBe('signature_invalid');
  });
});
