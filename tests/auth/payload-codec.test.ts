import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { ENCRYPTED_ENCODING, KEY_ID_FIELD, PayloadEncryptionCodec } from '../../auth/payload-codec';
import { WeftError } from '../../common/errors';

/** AES-256-GCM over Temporal payloads, keyed from WEFT_ENCRYPTION_KEY with rotation. */
describe('PayloadEncryptionCodec', () => {
  const oldKey = randomBytes(32).toString('base64');
  const newKey = randomBytes(32).toString('base64');
  const secret = { accessToken: 'eyJ-sharepoint-team-site-token', url: 'https://x.sharepoint.com/download?tempauth=v1.secret' };
  const plain = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
  const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
  const value = (payload: Payload) => defaultPayloadConverter.fromPayload(payload);

  async function refusal(fn: () => Promise<unknown>): Promise<WeftError> {
    try {
      await fn();
    } catch (err) {
      return err as WeftError;
    }
    throw new Error('it decoded');
  }

  test('a payload round-trips, and what Temporal stores holds neither the value nor its JSON encoding', async () => {
    const codec = new PayloadEncryptionCodec(oldKey);
    const [sealed] = await codec.encode([plain(secret)]);
    expect(text(sealed.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(sealed.metadata?.[KEY_ID_FIELD])).toBe(codec.currentKeyId);
    expect(Object.keys(sealed.metadata ?? {}).sort()).toEqual([KEY_ID_FIELD, 'encoding'].sort());
    const stored = Buffer.from(temporal.api.common.v1.Payload.encode(sealed).finish());
    for (const needle of ['sharepoint', 'tempauth', 'json/plain']) {
      expect(stored.includes(needle)).toBe(false);
      expect(stored.toString('base64').includes(Buffer.from(needle).toString('base64'))).toBe(false);
    }
    const [opened] = await codec.decode([sealed]);
    expect(text(opened.metadata?.encoding)).toBe('json/plain');
    expect(value(opened)).toEqual(secret);
  });

  test('the same value sealed twice differs (a fresh IV each time), and an empty batch stays empty', async () => {
    const codec = new PayloadEncryptionCodec(oldKey);
    const [a, b] = await codec.encode([plain(secret), plain(secret)]);
    expect(Buffer.from(a.data!).equals(Buffer.from(b.data!))).toBe(false);
    expect(await codec.encode([])).toEqual([]);
    expect(await codec.decode([])).toEqual([]);
  });

  test('rotation: a new key prepended seals new values, values sealed with the old one still open', async () => {
    const before = new PayloadEncryptionCodec(oldKey);
    const [old] = await before.encode([plain(secret)]);
    const after = new PayloadEncryptionCodec(`${newKey}, ${oldKey}`);
    expect(after.currentKeyId).not.toBe(before.currentKeyId);
    expect(value((await after.decode([old]))[0])).toEqual(secret);
    const [fresh] = await after.encode([plain('new')]);
    expect(text(fresh.metadata?.[KEY_ID_FIELD])).toBe(after.currentKeyId);
    expect(text(fresh.metadata?.[KEY_ID_FIELD])).toBe(new PayloadEncryptionCodec(newKey).currentKeyId);
    // The old key alone cannot read what the new key sealed.
    expect((await refusal(() => before.decode([fresh]))).code).toBe('payload_key_unknown');
  });

  test('an altered payload fails to decode with payload_undecryptable', async () => {
    const codec = new PayloadEncryptionCodec(oldKey);
    const [sealed] = await codec.encode([plain(secret)]);
    const data = Buffer.from(sealed.data!);
    for (const at of [0, 13, data.length - 1]) {
      const flipped = Buffer.from(data);
      flipped[at] ^= 1;
      const err = await refusal(() => codec.decode([{ ...sealed, data: flipped }]));
      expect(err).toBeInstanceOf(WeftError);
      expect(err.code).toBe('payload_undecryptable');
    }
    expect((await refusal(() => codec.decode([{ ...sealed, data: data.subarray(0, 20) }]))).code).toBe('payload_undecryptable');
    // Another key id of this codec's list does not open it either (the id is authenticated).
    const two = new PayloadEncryptionCodec(`${newKey},${oldKey}`);
    const moved = { metadata: { ...sealed.metadata, [KEY_ID_FIELD]: Buffer.from(two.currentKeyId) }, data: sealed.data };
    expect((await refusal(() => two.decode([moved]))).code).toBe('payload_undecryptable');
  });

  test('an unknown key id is payload_key_unknown, and the message names no key', async () => {
    const [sealed] = await new PayloadEncryptionCodec(newKey).encode([plain(secret)]);
    const err = await refusal(() => new PayloadEncryptionCodec(oldKey).decode([sealed]));
    expect(err).toBeInstanceOf(WeftError);
    expect(err.code).toBe('payload_key_unknown');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain(text(sealed.metadata?.[KEY_ID_FIELD]));
    for (const key of [oldKey, newKey]) {
      expect(err.message).not.toContain(key);
      expect(err.message).not.toContain(Buffer.from(key, 'base64').toString('base64url'));
    }
  });

  test('a payload without the encrypted encoding passes through decode unchanged (histories from before)', async () => {
    const codec = new PayloadEncryptionCodec(oldKey);
    const payloads = [plain(secret), plain(null), defaultPayloadConverter.toPayload(new Uint8Array([1, 2, 3])), {}];
    expect(await codec.decode(payloads)).toEqual(payloads);
  });

  test('a malformed WEFT_ENCRYPTION_KEY is invalid_encryption_key', () => {
    for (const bad of ['', ' , ', randomBytes(16).toString('base64'), `${oldKey},short`]) {
      let caught: unknown;
      try {
        new PayloadEncryptionCodec(bad);
      } catch (err) {
        caught = err;
      }
      expect((caught as WeftError).code).toBe('invalid_encryption_key');
    }
  });
});
