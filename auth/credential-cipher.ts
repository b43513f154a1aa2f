import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { WeftError } from '../common/errors';

/**
 * AES-256-GCM for credentials at rest. Several keys may be configured (comma-separated,
 * newest first): new values are sealed with the first, old values still open with any,
 * which is how the key is rotated without downtime.
 * Format: `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts); the key id is a short
 * hash of the key, never the key.
 */
export class CredentialCipher {
  private readonly keys: Array<{ id: string; key: Buffer }>;

  constructor(keyList: string) {
    const keys = keyList
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean)
      .map((k) => Buffer.from(k, 'base64'));
    if (keys.length === 0 || keys.some((k) => k.length !== 32)) {
      throw new WeftError('invalid_encryption_key', 'WEFT_ENCRYPTION_KEY must be one or more comma-separated base64 values of 32 bytes each.');
    }
    this.keys = keys.map((key) => ({ id: createHash('sha256').update(key).digest('base64url').slice(0, 8), key }));
  }

  static generateKey(): string {
    return randomBytes(32).toString('base64');
  }

  seal(value: unknown): string {
    const { id, key } = this.keys[0];
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return ['v1', id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  open<T = unknown>(sealed: string): T {
    const [version, id, iv, tag, ciphertext] = sealed.split('.');
    const entry = this.keys.find((k) => k.id === id);
    if (version !== 'v1' || !entry || !iv || !tag || ciphertext === undefined) {
      throw new WeftError('credentials_unreadable', 'Stored credentials cannot be decrypted with the configured WEFT_ENCRYPTION_KEY.');
    }
    const decipher = createDecipheriv('aes-256-gcm', entry.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
    return JSON.parse(plain.toString('utf8')) as T;
  }

  /** True when the value was sealed with an older key and should be re-sealed. */
  needsRotation(sealed: string): boolean {
    return sealed.split('.')[1] !== this.keys[0].id;
  }
}
