/**
 * Opaque tokens: delta tokens, `$skiptoken`s and download `tempauth`s. Each is base64url of
 * `payload|checksum`, the checksum keyed by the simulator's seed, so clients cannot build
 * or edit them (they must follow links verbatim) and garbage is detected as malformed.
 */
import { hash32 } from '../shared/prng';

export class TokenCodec {
  constructor(private readonly secret: number) {}

  private sign(kind: string, payload: string): string {
    return hash32(this.secret, kind, payload).toString(16).padStart(8, '0');
  }

  encode(kind: string, fields: ReadonlyArray<number | string>): string {
    const payload = kind + ';' + fields.join(';');
    return Buffer.from(`${payload}|${this.sign(kind, payload)}`, 'utf8').toString('base64url');
  }

  /** The fields, or null when the token is not one of ours of this kind. */
  decode(kind: string, token: string): string[] | null {
    if (!/^[A-Za-z0-9_-]{4,600}$/.test(token)) return null;
    const text = Buffer.from(token, 'base64url').toString('utf8');
    const bar = text.lastIndexOf('|');
    if (bar < 0) return null;
    const payload = text.slice(0, bar);
    if (text.slice(bar + 1) !== this.sign(kind, payload)) return null;
    const parts = payload.split(';');
    if (parts[0] !== kind) return null;
    return parts.slice(1);
  }

  /** Like decode, with every field a non-negative safe integer. */
  decodeInts(kind: string, token: string, count: number): number[] | null {
    const parts = this.decode(kind, token);
    if (!parts || parts.length !== count) return null;
    const out: number[] = [];
    for (const p of parts) {
      if (!/^\d{1,16}$/.test(p)) return null;
      const n = Number(p);
      if (!Number.isSafeInteger(n)) return null;
      out.push(n);
    }
    return out;
  }
}

/** Token kinds (the first payload field). */
export const TOKEN = {
  /** deltaLink position: drive, seq, epoch. */
  deltaLink: 'dl',
  /** delta nextLink: drive, listing id, offset, epoch, cut seq, enumerate (0/1), since seq. */
  deltaNext: 'dn',
  /** children $skiptoken: drive, folder, last child index. */
  children: 'ch',
  /** /me/drives $skiptoken: offset. */
  drives: 'dr',
  /** download tempauth: drive, item, expiry ms, nonce. */
  download: 'dl-auth',
  /** upload session tempauth: session id. */
  upload: 'up-auth',
} as const;
