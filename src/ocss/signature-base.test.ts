import { describe, expect, it } from 'vitest';
import { combinedFieldValue } from './http-fields.js';
import { OcssError } from './ocss-error.js';
import { buildSignatureBase } from './signature-base.js';
import { parseReceivedSignature } from './signature-input.js';

// RFC 9421 B.2.6's fields, as a well-formed baseline for the malformed variants below.
const B26_SIGNATURE_INPUT =
  'sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length")' +
  ';created=1618884473;keyid="test-key-ed25519"';
const B26_SIGNATURE =
  'sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:';

describe('derived components', () => {
  const request = (targetUri: string) => ({ method: 'POST', targetUri, headers: {} });
  const value = (targetUri: string, component: string) =>
    buildSignatureBase(request(targetUri), [component], '()').split('\n')[0];

  it('derives each supported component from the target URI', () => {
    const uri = 'https://www.example.com/path?param=value&foo=bar&baz=bat%2Dman';
    expect(value(uri, '@method')).toBe('"@method": POST');
    expect(value(uri, '@target-uri')).toBe(`"@target-uri": ${uri}`);
    expect(value(uri, '@authority')).toBe('"@authority": www.example.com');
    expect(value(uri, '@scheme')).toBe('"@scheme": https');
    expect(value(uri, '@request-target')).toBe(
      '"@request-target": /path?param=value&foo=bar&baz=bat%2Dman',
    );
    expect(value(uri, '@path')).toBe('"@path": /path');
    expect(value(uri, '@query')).toBe('"@query": ?param=value&foo=bar&baz=bat%2Dman');
  });

  it('normalizes the authority and fills an absent path and query', () => {
    expect(value('HTTPS://WWW.Example.COM:443', '@authority')).toBe(
      '"@authority": www.example.com',
    );
    expect(value('http://example.com:8080/x', '@authority')).toBe('"@authority": example.com:8080');
    expect(value('HTTP://example.com', '@scheme')).toBe('"@scheme": http');
    expect(value('https://example.com', '@path')).toBe('"@path": /');
    expect(value('https://example.com/x', '@query')).toBe('"@query": ?');
    expect(value('https://example.com/x?', '@query')).toBe('"@query": ?');
    expect(value('https://example.com/x?queryString', '@query')).toBe('"@query": ?queryString');
  });

  it('keeps the method exactly as received', () => {
    expect(
      buildSignatureBase(
        { method: 'post', targetUri: 'https://a.example/', headers: {} },
        ['@method'],
        '()',
      ),
    ).toBe('"@method": post\n"@signature-params": ()');
  });

  it('fails as signature_invalid on a target URI that is not absolute', () => {
    expect(() => buildSignatureBase(request('/relative'), ['@path'], '()')).toThrow(OcssError);
  });
});

describe('HTTP field values (RFC 9421 §2.1)', () => {
  const headers = {
    Host: 'www.example.com',
    'X-OWS-Header': '   Leading and trailing whitespace.   ',
    'X-Obs-Fold-Header': 'Obsolete\r\n    line folding.',
    'cache-control': ['max-age=60', '   must-revalidate'],
    'Example-Dict': ' a=1,    b=2;x=1;y=2,   c=(a   b   c)',
    'X-Empty-Header': '',
    'x-absent': undefined,
  };

  it('trims each line, unfolds, and joins repeated lines with ", "', () => {
    const base = buildSignatureBase(
      { method: 'GET', targetUri: 'https://www.example.com/', headers },
      [
        'host',
        'x-ows-header',
        'x-obs-fold-header',
        'cache-control',
        'example-dict',
        'x-empty-header',
      ],
      '()',
    );
    expect(base).toBe(
      [
        '"host": www.example.com',
        '"x-ows-header": Leading and trailing whitespace.',
        '"x-obs-fold-header": Obsolete line folding.',
        '"cache-control": max-age=60, must-revalidate',
        '"example-dict": a=1,    b=2;x=1;y=2,   c=(a   b   c)',
        '"x-empty-header": ',
        '"@signature-params": ()',
      ].join('\n'),
    );
  });

  it('joins the same field given under differently cased names', () => {
    expect(combinedFieldValue({ Accept: 'a', accept: ['b', 'c'] }, 'ACCEPT')).toBe('a, b, c');
    expect(combinedFieldValue(headers, 'x-absent')).toBeUndefined();
  });

  it('fails when a covered field is missing or holds a line break', () => {
    const target = { method: 'GET', targetUri: 'https://a.example/' };
    expect(() => buildSignatureBase({ ...target, headers }, ['x-absent'], '()')).toThrow(
      'covered field x-absent is missing from the request',
    );
    expect(() =>
      buildSignatureBase({ ...target, headers: { 'x-a': 'one\ntwo' } }, ['x-a'], '()'),
    ).toThrow(OcssError);
    expect(() =>
      buildSignatureBase({ ...target, method: 'GET\n"x": y', headers: {} }, ['@method'], '()'),
    ).toThrow(OcssError);
  });
});

describe('Signature-Input and Signature', () => {
  const parse = (input: string | undefined, signature: string | undefined) => {
    try {
      parseReceivedSignature(input, signature);
    } catch (error) {
      expect(error).toBeInstanceOf(OcssError);
      return (error as OcssError).message;
    }
    throw new Error('expected a failure');
  };
  const sig = B26_SIGNATURE.slice('sig-b26='.length);

  it.each([
    ['no Signature-Input', undefined, B26_SIGNATURE, 'are required'],
    ['no Signature', B26_SIGNATURE_INPUT, undefined, 'are required'],
    ['an unparsable Signature-Input', 'sig-b26=("date"', B26_SIGNATURE, 'not a structured'],
    ['an unparsable Signature', B26_SIGNATURE_INPUT, 'sig-b26=:abc', 'not a structured'],
    [
      'two signatures',
      `${B26_SIGNATURE_INPUT}, sig2=("@method");created=1;keyid="k"`,
      `${B26_SIGNATURE}, sig2=${sig}`,
      'exactly one signature',
    ],
    ['no signature inputs', '', B26_SIGNATURE, 'exactly one signature'],
    ['labels that differ', B26_SIGNATURE_INPUT, `other=${sig}`, 'no member sig-b26'],
    ['an item instead of a list', 'sig-b26="date"', B26_SIGNATURE, 'not an inner list'],
    ['a token component', 'sig-b26=(date);created=1', B26_SIGNATURE, 'not a string'],
    ['a component parameter', 'sig-b26=("date";sf);created=1', B26_SIGNATURE, 'parameters'],
    ['@query-param', 'sig-b26=("@query-param";name="a")', B26_SIGNATURE, 'parameters'],
    ['@status', 'sig-b26=("@status")', B26_SIGNATURE, 'not supported'],
    ['@signature-params', 'sig-b26=("@signature-params")', B26_SIGNATURE, 'not supported'],
    ['an uppercase field', 'sig-b26=("Date")', B26_SIGNATURE, 'lowercase'],
    ['a duplicated component', 'sig-b26=("date" "date")', B26_SIGNATURE, 'covered twice'],
    ['a string created', 'sig-b26=();created="1"', B26_SIGNATURE, 'created must be an integer'],
    ['a decimal created', 'sig-b26=();created=1.5', B26_SIGNATURE, 'created must be an integer'],
    ['a token keyid', 'sig-b26=();keyid=k', B26_SIGNATURE, 'keyid must be a string'],
    ['a token alg', 'sig-b26=();alg=ed25519', B26_SIGNATURE, 'alg must be a string'],
    ['a huge nonce', `sig-b26=();nonce="${'n'.repeat(1025)}"`, B26_SIGNATURE, 'too long'],
    ['a signature list', B26_SIGNATURE_INPUT, `sig-b26=(${sig})`, 'not a byte sequence'],
    ['a short signature', B26_SIGNATURE_INPUT, 'sig-b26=:AAAA:', '64 bytes'],
  ])('fails as signature_invalid on %s', (_name, input, signature, reason) => {
    expect(parse(input, signature)).toContain(reason);
  });
});
