/**
 * Seeded, deterministic randomness for the sandbox simulators. Never use Math.random in
 * simulator data: the same seed must give byte-identical output on every run.
 */

// Globals captured once: inside Jest's vm sandbox every global lookup (Math, Number, ...)
// goes through a slow interceptor, which made id generation ~20x slower there.
const imul = Math.imul;
const floor = Math.floor;
const isInteger = Number.isInteger;

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';

/** Final avalanche step of MurmurHash3 (32-bit). */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Hashes any mix of numbers and strings to an unsigned 32-bit integer (FNV-1a over the
 * parts, separated, then a murmur finaliser). Stable across runs and platforms.
 */
export function hash32(...parts: ReadonlyArray<number | string>): number {
  let h = 0x811c9dc5;
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p];
    if (typeof part === 'number' && isInteger(part) && part >= -0x80000000 && part <= 0xffffffff) {
      // Fast path for small integers: mix the four bytes directly.
      const v = part >>> 0;
      for (let shift = 0; shift < 32; shift += 8) {
        h ^= (v >>> shift) & 0xff;
        h = imul(h, 0x01000193);
      }
      h ^= 0x6e; // type tag so 1 and "1" differ
    } else {
      const s = '' + part;
      for (let i = 0; i < s.length; i++) {
        h ^= s.charCodeAt(i);
        h = imul(h, 0x01000193);
      }
      h ^= 0x73;
    }
    h = imul(h, 0x01000193);
    h ^= 0x1f; // part separator
  }
  return fmix32(h);
}

/** mulberry32: a tiny, fast 32-bit PRNG. Returns floats in [0, 1). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Convenience wrapper around mulberry32 with the helpers simulators keep needing. */
export class Rng {
  private readonly nextFloat: () => number;

  constructor(seed: number) {
    this.nextFloat = mulberry32(seed);
  }

  /** Derives an independent stream from hashed parts, e.g. `Rng.from(seed, 'event', index)`. */
  static from(...parts: ReadonlyArray<number | string>): Rng {
    return new Rng(hash32(...parts));
  }

  /** Float in [0, 1). */
  next(): number {
    return this.nextFloat();
  }

  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + floor(this.nextFloat() * (max - min + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.nextFloat() < p;
  }

  pick<T>(items: ReadonlyArray<T>): T {
    if (items.length === 0) throw new Error('Rng.pick: empty list');
    return items[floor(this.nextFloat() * items.length)];
  }

  /** Picks by weight: `weighted([['a', 3], ['b', 1]])`. */
  weighted<T>(items: ReadonlyArray<readonly [T, number]>): T {
    let total = 0;
    for (const [, w] of items) total += w;
    let r = this.nextFloat() * total;
    for (const [item, w] of items) {
      r -= w;
      if (r < 0) return item;
    }
    return items[items.length - 1][0];
  }

  /** `count` distinct items in their original order (count is clamped to the list size). */
  sample<T>(items: ReadonlyArray<T>, count: number): T[] {
    let n = count > 0 ? floor(count) : 0;
    if (n > items.length) n = items.length;
    const idx = items.map((_, i) => i);
    for (let i = 0; i < n; i++) {
      const j = i + floor(this.nextFloat() * (idx.length - i));
      const tmp = idx[i];
      idx[i] = idx[j];
      idx[j] = tmp;
    }
    return idx
      .slice(0, n)
      .sort((a, b) => a - b)
      .map((i) => items[i]);
  }

  private chars(alphabet: string, length: number): string {
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[floor(this.nextFloat() * alphabet.length)];
    return out;
  }

  /** Mixed-case letters and digits. */
  alnum(length: number): string {
    return this.chars(ALNUM, length);
  }

  /** Lower-case letters and digits. */
  lowerAlnum(length: number): string {
    return this.chars(LOWER_ALNUM, length);
  }

  /** Lower-case letters only. */
  lower(length: number): string {
    return this.chars('abcdefghijklmnopqrstuvwxyz', length);
  }

  digits(length: number): string {
    return this.chars('0123456789', length);
  }

  hex(length: number): string {
    return this.chars(HEX, length);
  }

  /** A UUID-v4-shaped string (deterministic, so not a real random UUID). */
  uuid(): string {
    const h = this.hex(32);
    const variant = '89ab'[floor(this.nextFloat() * 4)];
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}
