import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  exportPrivateKeyPem,
  generateSigningKey,
  loadSigningKeyPem,
  parsePublicKeyRaw,
  parsePublicKeySpkiPem,
  signBytes,
  signingKeyFrom,
  verifyBytes,
} from './ed25519-key.js';
import { OcssError } from './ocss-error.js';

/** PKCS#8 DER header of an Ed25519 private key; the 32-byte seed follows it. */
const PKCS8_ED25519_PREFIX = '302e020100300506032b657004220420';

function pemFromSeed(seedHex: string): string {
  const der = Buffer.from(PKCS8_ED25519_PREFIX + seedHex, 'hex').toString('base64');
  return `-----BEGIN PRIVATE KEY-----\n${der}\n-----END PRIVATE KEY-----\n`;
}

// RFC 8032 §7.1, TEST 1 to TEST 3.
const RFC8032_VECTORS = [
  {
    name: 'TEST 1',
    secretKey: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    publicKey: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    signature:
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155' +
      '5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    name: 'TEST 2',
    secretKey: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    publicKey: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    signature:
      '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da' +
      '085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
  {
    name: 'TEST 3',
    secretKey: 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
    publicKey: 'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025',
    message: 'af82',
    signature:
      '6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac' +
      '18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a',
  },
];

describe('RFC 8032 §7.1 Ed25519 vectors', () => {
  for (const vector of RFC8032_VECTORS) {
    it(`${vector.name}: derives the public key, signs and verifies`, async () => {
      const key = await loadSigningKeyPem(pemFromSeed(vector.secretKey));
      const message = Buffer.from(vector.message, 'hex');

      expect(Buffer.from(key.publicJwk.x, 'base64url').toString('hex')).toBe(vector.publicKey);
      expect(key.sign(message).toString('hex')).toBe(vector.signature);

      const publicKey = parsePublicKeyRaw(
        Buffer.from(vector.publicKey, 'hex').toString('base64url'),
      );
      const signature = Buffer.from(vector.signature, 'hex');
      expect(await verifyBytes(publicKey, message, signature)).toBe(true);

      const otherMessage = Buffer.concat([message, Buffer.from([0])]);
      expect(await verifyBytes(publicKey, otherMessage, signature)).toBe(false);
      const flipped = Buffer.from(signature);
      flipped[0] = (flipped[0] ?? 0) ^ 1;
      expect(await verifyBytes(publicKey, message, flipped)).toBe(false);
    });
  }

  it('rejects a signature of the wrong length instead of throwing', async () => {
    const key = await generateSigningKey();
    expect(await verifyBytes(key.publicKey, Buffer.from('x'), Buffer.alloc(63))).toBe(false);
    expect(await verifyBytes(key.publicKey, Buffer.from('x'), Buffer.alloc(0))).toBe(false);
  });

  it('is false for a key of another type', async () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(await verifyBytes(publicKey, Buffer.from('x'), Buffer.alloc(64))).toBe(false);
  });

  it('answers each of many verifications running at once with its own result', async () => {
    // They run on the thread pool together: every answer must still be its own signature's.
    const key = await generateSigningKey();
    const messages = Array.from({ length: 64 }, (_, index) => Buffer.from(`message ${index}`));
    const signatures = messages.map((message) => key.sign(message));
    const results = await Promise.all(
      messages.map((message, index) =>
        verifyBytes(
          key.publicKey,
          message,
          signatures[index % 2 === 0 ? index : index - 1] as Buffer,
        ),
      ),
    );
    expect(results).toEqual(messages.map((_, index) => index % 2 === 0));
  });
});

describe('signing keys', () => {
  it('generates a key whose PEM loads back to the same kid', async () => {
    const key = await generateSigningKey();
    const again = await loadSigningKeyPem(exportPrivateKeyPem(key));
    expect(again.kid).toBe(key.kid);
    const message = Buffer.from('trust list');
    expect(await verifyBytes(again.publicKey, message, key.sign(message))).toBe(true);
    expect(signBytes(key.privateKey, message).equals(key.sign(message))).toBe(true);
  });

  it('refuses private keys of any other type, with the type in the message', async () => {
    const pairs = {
      rsa: generateKeyPairSync('rsa', { modulusLength: 1024 }),
      ec: generateKeyPairSync('ec', { namedCurve: 'P-256' }),
      ed448: generateKeyPairSync('ed448'),
      x25519: generateKeyPairSync('x25519'),
    };
    for (const [type, pair] of Object.entries(pairs)) {
      const pem = pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
      const error = await loadSigningKeyPem(pem).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OcssError);
      expect((error as OcssError).message).toContain(`a ${type} private key`);
    }
  });

  it('refuses PEMs that are not unencrypted PKCS#8', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const ed = generateKeyPairSync('ed25519');
    const notPkcs8 = [
      rsa.privateKey.export({ format: 'pem', type: 'pkcs1' }).toString(),
      ed.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      ed.privateKey
        .export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'secret' })
        .toString(),
      '',
      'not a pem',
      '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----',
    ];
    for (const pem of notPkcs8) {
      await expect(loadSigningKeyPem(pem)).rejects.toBeInstanceOf(OcssError);
    }
  });

  it('refuses a public KeyObject where a private key is expected', async () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    await expect(signingKeyFrom(publicKey)).rejects.toThrow(/a ed25519 public key/);
  });
});

describe('public key parsing', () => {
  it('reads an Ed25519 SPKI PEM (RFC 9421 B.1.4 test-key-ed25519)', () => {
    const publicKey = parsePublicKeySpkiPem(
      '-----BEGIN PUBLIC KEY-----\n' +
        'MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n' +
        '-----END PUBLIC KEY-----\n',
    );
    expect(publicKey.export({ format: 'jwk' }).x).toBe(
      'JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs',
    );
  });

  it('refuses other public keys, private PEMs and garbage', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ed = generateKeyPairSync('ed25519');
    const refused = [
      rsa.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      ec.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      generateKeyPairSync('x25519').publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      // createPublicKey would happily derive a public key from these: refused by label.
      ed.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      rsa.publicKey.export({ format: 'pem', type: 'pkcs1' }).toString(),
      '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----',
      '',
    ];
    for (const pem of refused) {
      expect(() => parsePublicKeySpkiPem(pem)).toThrow(OcssError);
    }
  });

  it('reads raw 32-byte base64url keys and refuses anything else', () => {
    const x = '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo';
    expect(parsePublicKeyRaw(x).asymmetricKeyType).toBe('ed25519');
    const refused = [
      '',
      x.slice(1),
      `${x}A`,
      `${x}=`,
      x.replace('_', '/'),
      // Same 32 bytes, but the 2 spare bits are set: not the canonical text.
      `${x.slice(0, 42)}p`,
    ];
    for (const text of refused) {
      expect(() => parsePublicKeyRaw(text)).toThrow(OcssError);
    }
  });
});
