import { WeftError } from '../common/errors';

/**
 * WEFT_ENCRYPTION_KEY's entries, newest first: comma-separated base64 values of 32 bytes. The
 * credential cipher and the Temporal payload codec both derive their keys from this list, so
 * both read it by one rule and refuse a bad one with the same error.
 */
export function parseEncryptionKeys(keyList: string): Buffer[] {
  const keys = keyList
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
    .map((k) => Buffer.from(k, 'base64'));
  if (keys.length === 0 || keys.some((k) => k.length !== 32)) {
    throw new WeftError('invalid_encryption_key', 'WEFT_ENCRYPTION_KEY must be one or more comma-separated base64 values of 32 bytes each.');
  }
  return keys;
}
