import { createCipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * A value as Weft sealed it before sealed values were bound to their place (format v1:
 * AES-256-GCM, no AAD), so the tests can hold the stored data of an older Weft.
 */
export function sealV1(keyBase64: string, value: unknown): string {
  const key = Buffer.from(keyBase64, 'base64');
  const id = createHash('sha256').update(key).digest('base64url').slice(0, 8);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return ['v1', id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}
