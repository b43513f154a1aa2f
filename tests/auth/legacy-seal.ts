import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import type { SealedPlace } from '../../auth/credential-cipher';

/**
 * A value as Weft sealed it before sealed values were bound to their place (format v1:
 * AES-256-GCM, no AAD), so the tests can hold the stored data of an older Weft.
 */
export function sealV1(keyBase64: string, value: unknown): string {
  return sealLegacy('v1', keyBase64, value, null);
}

/**
 * A value as Weft sealed it before the environment was part of the binding (format v2: the
 * field's path alone as AAD).
 */
export function sealV2(keyBase64: string, value: unknown, place: SealedPlace): string {
  return sealLegacy('v2', keyBase64, value, place.path);
}

function sealLegacy(format: string, keyBase64: string, value: unknown, aad: string | null): string {
  const key = Buffer.from(keyBase64, 'base64');
  const id = createHash('sha256').update(key).digest('base64url').slice(0, 8);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (aad !== null) cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return [format, id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}
