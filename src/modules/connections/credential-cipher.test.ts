// NIST SP 800-38D / the GCM spec's test case 16 (AES-256, 96-bit IV, with AAD), checked
// through node:crypto directly: the primitive under the cipher is the standard one.
import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCredentialCipher, keyIdOf } from './credential-cipher.js';

describe('credential cipher', () => {
  it('uses AES-256-GCM as standardised (GCM test case 16)', () => {
    const key = Buffer.from(
      'feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308',
      'hex',
    );
    const iv = Buffer.from('cafebabefacedbaddecaf888', 'hex');
    const plain = Buffer.from(
      'd9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39',
      'hex',
    );
    const aad = Buffer.from('feedfacedeadbeeffeedfacedeadbeefabaddad2', 'hex');
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aad);
    const out = Buffer.concat([cipher.update(plain), cipher.final()]);
    expect(out.toString('hex')).toBe(
      '522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662',
    );
    expect(cipher.getAuthTag().toString('hex')).toBe('76fc6ece0f4e1768cddf8853bb2d551b');
  });

  it('round-trips, never repeats a ciphertext, and hides the plaintext', () => {
    const cipher = createCredentialCipher([randomBytes(32)]);
    const secret = { api_key: 'nextdns-secret-123', profile: 'abc' };
    const a = cipher.seal(secret, 'conn-1');
    const b = cipher.seal(secret, 'conn-1');
    expect(a.sealed.equals(b.sealed)).toBe(false);
    expect(a.sealed.toString('latin1')).not.toContain('nextdns-secret-123');
    expect(cipher.open(a, 'conn-1')).toEqual(secret);
  });

  it('refuses a ciphertext moved to another row, tampered with, or under an unknown key', () => {
    const key = randomBytes(32);
    const cipher = createCredentialCipher([key]);
    const sealed = cipher.seal({ token: 't' }, 'conn-1');
    expect(() => cipher.open(sealed, 'conn-2')).toThrow();
    const flipped = Buffer.from(sealed.sealed);
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] ?? 0) ^ 1;
    expect(() => cipher.open({ ...sealed, sealed: flipped }, 'conn-1')).toThrow();
    const other = createCredentialCipher([randomBytes(32)]);
    expect(() => other.open(sealed, 'conn-1')).toThrow(/not configured/);
  });

  it('rotates: a new first key encrypts, the old one still decrypts', () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const before = createCredentialCipher([oldKey]).seal({ n: 1 }, 'c');
    const rotated = createCredentialCipher([newKey, oldKey]);
    expect(rotated.open(before, 'c')).toEqual({ n: 1 });
    expect(rotated.seal({ n: 2 }, 'c').keyId).toBe(keyIdOf(newKey));
  });
});
