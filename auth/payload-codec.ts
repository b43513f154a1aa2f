import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { WeftError } from '../common/errors';
import { parseEncryptionKeys } from './encryption-keys';

/** The `encoding` of a payload this codec wrote (Temporal's name for an encrypted payload). */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** Metadata field naming the payload key a payload was sealed with: a short hash, never the key. */
export const KEY_ID_FIELD = 'encryption-key-id';

/**
 * The HKDF `info` label: the payload key is a different key from the credential key derived
 * from the same WEFT_ENCRYPTION_KEY entry, so one key never serves two purposes (a value sealed
 * by one cannot be opened or forged by the other).
 */
const HKDF_INFO = 'weft temporal payload encryption v1';
const IV_BYTES = 12;
/** GCM's full tag: OpenSSL would accept a shorter one, which makes forgeries cheaper. */
const TAG_BYTES = 16;

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();
const ProtoPayload = temporal.api.common.v1.Payload;

interface PayloadKey {
  id: string;
  key: Buffer;
}

/**
 * AES-256-GCM over every payload Weft writes to Temporal (workflow and activity inputs and
 * results, signals, queries, schedule arguments, failure details), so the history holds no
 * secret in clear. Keyed from WEFT_ENCRYPTION_KEY (comma-separated base64 32-byte keys, newest
 * first): each entry gives a payload key by HKDF-SHA256; payloads are sealed with the newest,
 * named in their metadata by key id, and opened with whichever key that id names, so a key is
 * rotated by prepending a new one and keeping the old one while histories sealed with it live.
 *
 * The whole payload (its metadata too: `json/plain`, a message type) is serialized and sealed;
 * the key id is the additional authenticated data, so a payload moved under another id fails.
 * A payload this codec did not write (a run started before encryption was on, the committed
 * replay histories) decodes as it is.
 */
export class PayloadEncryptionCodec implements PayloadCodec {
  private readonly keys: PayloadKey[];

  constructor(keyList: string) {
    this.keys = parseEncryptionKeys(keyList).map((master) => {
      const key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), HKDF_INFO, 32));
      // A hash of the derived key: it names the key without telling anything about either key.
      return { id: createHash('sha256').update(key).digest('base64url').slice(0, 8), key };
    });
  }

  /** The id of the key new payloads are sealed with. */
  get currentKeyId(): string {
    return this.keys[0].id;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.seal(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.open(payload));
  }

  private seal(payload: Payload): Payload {
    const { id, key } = this.keys[0];
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(id, 'utf8'));
    const sealed = Buffer.concat([iv, cipher.update(ProtoPayload.encode(payload).finish()), cipher.final(), cipher.getAuthTag()]);
    return { metadata: { encoding: textEncoder.encode(ENCRYPTED_ENCODING), [KEY_ID_FIELD]: textEncoder.encode(id) }, data: sealed };
  }

  private open(payload: Payload): Payload {
    const encoding = payload.metadata?.encoding;
    if (!encoding || textDecoder.decode(encoding) !== ENCRYPTED_ENCODING) return payload;
    const idBytes = payload.metadata?.[KEY_ID_FIELD];
    const id = idBytes ? textDecoder.decode(idBytes) : '';
    const entry = this.keys.find((k) => k.id === id);
    if (!entry) throw new PayloadKeyUnknownError(id);
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_BYTES + TAG_BYTES) throw new PayloadUndecryptableError();
    let plain: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', entry.key, data.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(id, 'utf8'));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadUndecryptableError();
    }
    const inner = ProtoPayload.decode(plain);
    return { metadata: inner.metadata, data: inner.data };
  }
}

/**
 * A payload names a key that WEFT_ENCRYPTION_KEY no longer (or never) had: the key was removed
 * while histories sealed with it still live, or the payload comes from another deployment.
 * Only the operator can fix it (put the old key back, at the end of the list), so it is final.
 */
class PayloadKeyUnknownError extends WeftError {
  constructor(keyId: string) {
    super(
      'payload_key_unknown',
      `A Temporal payload was encrypted with key id "${keyId.replace(/[^A-Za-z0-9_-]/g, '?').slice(0, 16)}", which none of WEFT_ENCRYPTION_KEY's keys has; add that key back (last in the list) to read it.`,
      400,
      undefined,
      { retryable: false },
    );
  }
}

/** The payload does not open with the key it names: damaged or altered. */
class PayloadUndecryptableError extends WeftError {
  constructor() {
    super('payload_undecryptable', 'A Temporal payload marked binary/encrypted does not decrypt: it was damaged or altered.', 400, undefined, {
      retryable: false,
    });
  }
}
