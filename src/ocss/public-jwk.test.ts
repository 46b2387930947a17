import { createHash, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadSigningKeyPem, parsePublicKeyRaw } from './ed25519-key.js';
import { OcssError } from './ocss-error.js';
import { jwkThumbprint, keyIdFor, publicJwkFor } from './public-jwk.js';

describe('RFC 7638 thumbprints', () => {
  it('§3.1: the example RSA key', async () => {
    const rsaKey = {
      kty: 'RSA',
      n:
        '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc' +
        '_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YG' +
        'jQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdk' +
        't-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqD' +
        'Kgw',
      e: 'AQAB',
      alg: 'RS256',
      kid: '2011-04-29',
    };
    expect(await jwkThumbprint(rsaKey)).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });

  it('RFC 8037 A.3: the Ed25519 key of RFC 8032 TEST 1, through publicJwkFor', async () => {
    const jwk = await publicJwkFor(
      parsePublicKeyRaw('11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo'),
    );
    expect(jwk.kid).toBe('kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k');
    // And by hand: SHA-256 of the required members in lexicographic order, no whitespace.
    const members = `{"crv":"Ed25519","kty":"OKP","x":"${jwk.x}"}`;
    expect(createHash('sha256').update(members).digest('base64url')).toBe(jwk.kid);
  });
});

describe('published JWKs', () => {
  it('has exactly the members of CONTRACT §9, kid being the thumbprint', async () => {
    const key = await loadSigningKeyPem(
      '-----BEGIN PRIVATE KEY-----\n' +
        'MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n' +
        '-----END PRIVATE KEY-----\n',
    );
    expect(key.publicJwk).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs',
      kid: await jwkThumbprint({
        kty: 'OKP',
        crv: 'Ed25519',
        x: 'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs',
      }),
      use: 'sig',
      alg: 'EdDSA',
    });
    expect(key.kid).toBe(key.publicJwk.kid);
    expect(keyIdFor('did:ocss:haven-steward', key.kid)).toBe(`did:ocss:haven-steward#${key.kid}`);
  });

  it('never publishes a private key or a non-Ed25519 key', async () => {
    const ed = generateKeyPairSync('ed25519');
    await expect(publicJwkFor(ed.privateKey)).rejects.toBeInstanceOf(OcssError);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await expect(publicJwkFor(ec.publicKey)).rejects.toBeInstanceOf(OcssError);
  });
});
