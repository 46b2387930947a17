// Platform credentials (DNS providers' API keys, OAuth tokens) at rest: AES-256-GCM with a
// fresh 96-bit nonce per write, the connection id as associated data (a ciphertext copied
// onto another row does not decrypt), and the key's id stored beside it so keys can rotate.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export interface SealedCredentials {
  /** nonce ‖ tag ‖ ciphertext */
  sealed: Buffer;
  keyId: string;
}

export interface CredentialCipher {
  seal(plain: unknown, boundTo: string): SealedCredentials;
  open(sealed: SealedCredentials, boundTo: string): unknown;
}

/** A short public name of a key: the first 8 bytes of its SHA-256, hex. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** `keys[0]` encrypts; any of `keys` decrypts what it encrypted. */
export function createCredentialCipher(keys: Buffer[]): CredentialCipher {
  const [current] = keys;
  if (!current || keys.some((key) => key.length !== 32)) {
    throw new Error('credential keys must be 32 bytes each, at least one');
  }
  const byId = new Map(keys.map((key) => [keyIdOf(key), key]));
  const currentId = keyIdOf(current);

  return {
    seal(plain, boundTo) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, nonce);
      cipher.setAAD(Buffer.from(boundTo));
      const body = Buffer.concat([cipher.update(JSON.stringify(plain), 'utf8'), cipher.final()]);
      return { sealed: Buffer.concat([nonce, cipher.getAuthTag(), body]), keyId: currentId };
    },

    open({ sealed, keyId }, boundTo) {
      const key = byId.get(keyId);
      if (!key) {
        throw new Error(`credentials were sealed with key ${keyId}, which is not configured`);
      }
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, NONCE_BYTES));
      decipher.setAAD(Buffer.from(boundTo));
      decipher.setAuthTag(sealed.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(sealed.subarray(NONCE_BYTES + TAG_BYTES)),
        decipher.final(),
      ]);
      return JSON.parse(plain.toString('utf8'));
    },
  };
}
