import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { CredentialsUnreadableError } from '../common/errors';
import { parseEncryptionKeys } from './encryption-keys';

/** GCM's full tag. A shorter one would be accepted by OpenSSL and make forgeries cheaper. */
const TAG_BYTES = 16;
const IV_BYTES = 12;

/**
 * Where a sealed value lives: the environment that owns it and the field of the document it
 * is stored in. Both are the additional authenticated data (AAD) it is sealed with, so a
 * value copied into another document or field, or a document moved to another environment
 * (its `environment` changed), does not open there. Documents are named by `_id`, which never
 * changes (connection ids and integration keys can be reused after a delete; `_id`s are not).
 */
export interface SealedPlace {
  environment: string;
  /** The field: `<collection>/<_id>/<field>`. */
  path: string;
}

/** A stored document that owns a sealed value: its `_id` and the environment it belongs to. */
interface Owner {
  _id: string;
  environment: string;
}

export const sealedAt = {
  connectionCredentials: (connection: Owner): SealedPlace => ({
    environment: connection.environment,
    path: `connections/${connection._id}/credentials_encrypted`,
  }),
  integrationCredentials: (integration: Owner): SealedPlace => ({
    environment: integration.environment,
    path: `integrations/${integration._id}/credentials_encrypted`,
  }),
  /** The current and the previous webhook signing key share one binding: rotation moves the current one into the previous field as it is. */
  webhookSigningKey: (environment: string): SealedPlace => ({ environment, path: `environments/${environment}/webhook_signing_key` }),
  codeVerifier: (authState: Owner): SealedPlace => ({ environment: authState.environment, path: `auth_states/${authState._id}/code_verifier_sealed` }),
};

/** A document as the re-seal reads it: `_id` and, except in `environments` (whose `_id` is the environment), `environment`. */
interface StoredOwner {
  _id: unknown;
  environment?: unknown;
}

const owner = (doc: StoredOwner): Owner => ({ _id: String(doc._id), environment: String(doc.environment) });

/**
 * Every stored field that holds sealed values, with the place of the value found in a
 * document: what the re-seal (store/reseal.ts) walks. A new sealed field is added here and
 * in `sealedAt` together.
 */
const SEALED_FIELDS: ReadonlyArray<{ collection: string; field: string; bindingOf(doc: StoredOwner): SealedPlace }> = [
  { collection: 'connections', field: 'credentials_encrypted', bindingOf: (doc) => sealedAt.connectionCredentials(owner(doc)) },
  { collection: 'integrations', field: 'credentials_encrypted', bindingOf: (doc) => sealedAt.integrationCredentials(owner(doc)) },
  { collection: 'environments', field: 'webhook_signing_key_encrypted', bindingOf: (doc) => sealedAt.webhookSigningKey(String(doc._id)) },
  { collection: 'environments', field: 'previous_webhook_signing_key_encrypted', bindingOf: (doc) => sealedAt.webhookSigningKey(String(doc._id)) },
  // Short-lived, but a flow in progress must survive the old key being removed.
  { collection: 'auth_states', field: 'code_verifier_sealed', bindingOf: (doc) => sealedAt.codeVerifier(owner(doc)) },
];

/**
 * The AAD of each format. v3 binds the environment and the field; v2 (written before v3)
 * the field alone; v1 (older still) nothing: a v1 value opens wherever it is put.
 */
const CURRENT_FORMAT = 'v3';
function aadOf(format: string, place: SealedPlace): Buffer | null {
  if (format === 'v3') return Buffer.from(JSON.stringify([place.environment, place.path]), 'utf8');
  if (format === 'v2') return Buffer.from(place.path, 'utf8');
  return null;
}

/**
 * AES-256-GCM for credentials at rest. Several keys may be configured (comma-separated,
 * newest first): new values are sealed with the first, old values still open with any,
 * which is how the key is rotated without downtime.
 *
 * Format: `v3.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts), sealed with the value's
 * place (`sealedAt`: environment and field) as AAD; the key id is a short hash of the key,
 * never the key. The tag must be the full 16 bytes. Values of an earlier Weft still open
 * where they are until the re-seal (store/reseal.ts, run by processes at start) moves them
 * to v3: v2 (bound to the field only) always, v1 (bound to nothing, so a copy of one opens
 * anywhere) only until a re-seal has found none left; from then on (`refuseUnbound`) a v1
 * value is refused, so one kept from an old backup cannot be planted anywhere.
 */
export class CredentialCipher {
  private readonly keys: Array<{ id: string; key: Buffer }>;
  private unboundRefused = false;
  /** Where this cipher's values are stored (the store's re-seal reads it: store/reseal.ts `Sealer`). */
  readonly sealedFields = SEALED_FIELDS;

  constructor(keyList: string) {
    this.keys = parseEncryptionKeys(keyList).map((key) => ({ id: createHash('sha256').update(key).digest('base64url').slice(0, 8), key }));
  }

  static generateKey(): string {
    return randomBytes(32).toString('base64');
  }

  /** Seals `value` for the place named by `place` (see `sealedAt`); it opens only there. */
  seal(value: unknown, place: SealedPlace): string {
    const { id, key } = this.keys[0];
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aadOf(CURRENT_FORMAT, place)!);
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return [CURRENT_FORMAT, id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  /** Opens a value sealed for `place`; anything else (another place, another key, a damaged or shortened value, a refused format) is `credentials_unreadable`. */
  open<T = unknown>(sealed: string, place: SealedPlace): T {
    const parts = typeof sealed === 'string' ? sealed.split('.') : [];
    const [format, id, ivText, tagText, ciphertext] = parts;
    const entry = this.keys.find((k) => k.id === id);
    const iv = Buffer.from(ivText ?? '', 'base64url');
    const tag = Buffer.from(tagText ?? '', 'base64url');
    if (parts.length !== 5 || !this.accepts(format) || !entry || iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw unreadable();
    try {
      const decipher = createDecipheriv('aes-256-gcm', entry.key, iv, { authTagLength: TAG_BYTES });
      const aad = aadOf(format, place);
      if (aad) decipher.setAAD(aad);
      decipher.setAuthTag(tag);
      const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
      return JSON.parse(plain.toString('utf8')) as T;
    } catch {
      throw unreadable();
    }
  }

  /** True when the value should be sealed again: an older key, or a format before v3. */
  needsReseal(sealed: string): boolean {
    const [format, id] = sealed.split('.');
    return format !== CURRENT_FORMAT || id !== this.keys[0].id;
  }

  /** From now on v1 values (bound to no place) are refused: the re-seal found none left (store/reseal.ts). */
  refuseUnbound(): void {
    this.unboundRefused = true;
  }

  private accepts(format: string | undefined): boolean {
    return format === CURRENT_FORMAT || format === 'v2' || (format === 'v1' && !this.unboundRefused);
  }
}

function unreadable(): CredentialsUnreadableError {
  return new CredentialsUnreadableError('Stored credentials cannot be decrypted with the configured WEFT_ENCRYPTION_KEY (or were not sealed for this place).');
}
