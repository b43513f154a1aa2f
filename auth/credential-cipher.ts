import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { CredentialsUnreadableError, WeftError } from '../common/errors';

/** GCM's full tag. A shorter one would be accepted by OpenSSL and make forgeries cheaper. */
const TAG_BYTES = 16;
const IV_BYTES = 12;

/**
 * Where a sealed value lives, as the additional authenticated data (AAD) it is sealed
 * with: a value copied into another document or field does not open there. Documents are
 * named by `_id`, which never changes (connection ids and integration keys can be reused
 * after a delete; `_id`s are not).
 */
export const sealedAt = {
  connectionCredentials: (connectionDocId: string) => `connections/${connectionDocId}/credentials_encrypted`,
  integrationCredentials: (integrationDocId: string) => `integrations/${integrationDocId}/credentials_encrypted`,
  /** The current and the previous webhook signing key share one binding: rotation moves the current one into the previous field as it is. */
  webhookSigningKey: (environment: string) => `environments/${environment}/webhook_signing_key`,
  codeVerifier: (authStateId: string) => `auth_states/${authStateId}/code_verifier_sealed`,
};

/**
 * Every stored field that holds sealed values, with the binding of the value found in a
 * document: what the re-seal (store/reseal.ts) walks. A new sealed field is added here and
 * in `sealedAt` together.
 */
const SEALED_FIELDS: ReadonlyArray<{ collection: string; field: string; bindingOf(docId: string): string }> = [
  { collection: 'connections', field: 'credentials_encrypted', bindingOf: sealedAt.connectionCredentials },
  { collection: 'integrations', field: 'credentials_encrypted', bindingOf: sealedAt.integrationCredentials },
  { collection: 'environments', field: 'webhook_signing_key_encrypted', bindingOf: sealedAt.webhookSigningKey },
  { collection: 'environments', field: 'previous_webhook_signing_key_encrypted', bindingOf: sealedAt.webhookSigningKey },
  // Short-lived, but a flow in progress must survive the old key being removed.
  { collection: 'auth_states', field: 'code_verifier_sealed', bindingOf: sealedAt.codeVerifier },
];

/**
 * AES-256-GCM for credentials at rest. Several keys may be configured (comma-separated,
 * newest first): new values are sealed with the first, old values still open with any,
 * which is how the key is rotated without downtime.
 *
 * Format: `v2.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts), sealed with the value's
 * location (`sealedAt`) as AAD; the key id is a short hash of the key, never the key. The
 * tag must be the full 16 bytes. `v1` values (no AAD, written before) still open wherever
 * they are until the re-seal (store/reseal.ts, run by processes at start) moves them to v2.
 */
export class CredentialCipher {
  private readonly keys: Array<{ id: string; key: Buffer }>;
  /** Where this cipher's values are stored (the store's re-seal reads it: store/reseal.ts `Sealer`). */
  readonly sealedFields = SEALED_FIELDS;

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

  /** Seals `value` for the place named by `binding` (see `sealedAt`); it opens only there. */
  seal(value: unknown, binding: string): string {
    const { id, key } = this.keys[0];
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(binding, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return ['v2', id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  /** Opens a value sealed for `binding`; anything else (another place, another key, a damaged or shortened value) is `credentials_unreadable`. */
  open<T = unknown>(sealed: string, binding: string): T {
    const parts = typeof sealed === 'string' ? sealed.split('.') : [];
    const [version, id, ivText, tagText, ciphertext] = parts;
    const entry = this.keys.find((k) => k.id === id);
    const iv = Buffer.from(ivText ?? '', 'base64url');
    const tag = Buffer.from(tagText ?? '', 'base64url');
    if (parts.length !== 5 || (version !== 'v1' && version !== 'v2') || !entry || iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw unreadable();
    try {
      const decipher = createDecipheriv('aes-256-gcm', entry.key, iv, { authTagLength: TAG_BYTES });
      if (version === 'v2') decipher.setAAD(Buffer.from(binding, 'utf8'));
      decipher.setAuthTag(tag);
      const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
      return JSON.parse(plain.toString('utf8')) as T;
    } catch {
      throw unreadable();
    }
  }

  /** True when the value should be sealed again: an older key, or the v1 format (no binding). */
  needsReseal(sealed: string): boolean {
    const [version, id] = sealed.split('.');
    return version !== 'v2' || id !== this.keys[0].id;
  }
}

function unreadable(): CredentialsUnreadableError {
  return new CredentialsUnreadableError('Stored credentials cannot be decrypted with the configured WEFT_ENCRYPTION_KEY (or were not sealed for this place).');
}
