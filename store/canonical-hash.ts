import { createHash } from 'node:crypto';
import stringify from 'safe-stable-stringify';

/** SHA-256 over JSON with sorted keys: two records that differ only in key order hash alike. */
export function canonicalHash(value: unknown): string {
  return createHash('sha256')
    .update(stringify(value) ?? 'null')
    .digest('base64url');
}
