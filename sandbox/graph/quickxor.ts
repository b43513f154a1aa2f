/**
 * QuickXorHash (OneDrive's content hash) and the synthetic file content the simulator serves.
 *
 * The hash is a 160-bit vector: byte i of the input is XORed in at bit (i * 11) mod 160
 * (wrapping around), then the 64-bit little-endian length is XORed into bytes 12..19, and
 * the 20 bytes are base64-encoded.
 *
 * File content is synthetic but real: `file.hashes.quickXorHash` in every response is the
 * hash of exactly the bytes the download URL returns, so a client that verifies downloads
 * works. Hashing a 300 MB file per response would be far too slow, so the content has a
 * structure the hash can exploit (see `syntheticContentHash`).
 */

const imul = Math.imul;

const WIDTH_BITS = 160;
const SHIFT = 11;

/** XORs `byte` into the 160-bit state (five little-endian 32-bit cells) at `bit`. */
function xorByteAt(cells: Uint32Array, bit: number, byte: number): void {
  const cell = bit >>> 5;
  const off = bit & 31;
  cells[cell] ^= (byte << off) >>> 0;
  if (off > 24) cells[(cell + 1) % 5] ^= byte >>> (32 - off);
}

function finish(cells: Uint32Array, length: number): string {
  const out = Buffer.alloc(20);
  for (let i = 0; i < 5; i++) out.writeUInt32LE(cells[i] >>> 0, i * 4);
  // Length as 64-bit little endian into the last 8 bytes (lengths here stay below 2^53).
  let len = length;
  for (let i = 0; i < 8; i++) {
    out[12 + i] ^= len % 256;
    len = Math.floor(len / 256);
  }
  return out.toString('base64');
}

/** The reference algorithm over a whole buffer (used for small data and by the tests). */
export function quickXorHash(data: Uint8Array): string {
  const cells = new Uint32Array(5);
  let bit = 0;
  for (let i = 0; i < data.length; i++) {
    xorByteAt(cells, bit, data[i]);
    bit += SHIFT;
    if (bit >= WIDTH_BITS) bit -= WIDTH_BITS;
  }
  return finish(cells, data.length);
}

// ---------------------------------------------------------------------------------------
// Synthetic content
// ---------------------------------------------------------------------------------------

/**
 * Content is a sequence of BLOCK-byte blocks. Block k is the item's base block with its
 * first 4 bytes replaced by k (uint32 little endian), so blocks differ from each other.
 * BLOCK is a multiple of 160, so every block starts at the same hash bit offset (0) and
 * the hash of a file of any size costs one pass over one block.
 */
export const BLOCK = 320;

/** The base block for a content key: deterministic pseudo-random bytes (mulberry32, inlined). */
export function baseBlock(contentKey: number, buf: Buffer = Buffer.allocUnsafe(BLOCK)): Buffer {
  let a = contentKey >>> 0;
  for (let i = 0; i < BLOCK; i += 4) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    const w = (t ^ (t >>> 14)) >>> 0;
    buf[i] = w & 0xff;
    buf[i + 1] = (w >>> 8) & 0xff;
    buf[i + 2] = (w >>> 16) & 0xff;
    buf[i + 3] = w >>> 24;
  }
  return buf;
}

/** XOR of all integers in [0, n] (closed form). */
function xorUpTo(n: number): number {
  switch (n & 3) {
    case 0:
      return n >>> 0;
    case 1:
      return 1;
    case 2:
      return (n + 1) >>> 0;
    default:
      return 0;
  }
}

/** Hash bit position of each byte of a block (blocks all start at bit 0), split in cell/offset. */
const CELL = new Uint8Array(BLOCK);
const OFFSET = new Uint8Array(BLOCK);
for (let p = 0; p < BLOCK; p++) {
  const bit = (p * SHIFT) % WIDTH_BITS;
  CELL[p] = bit >>> 5;
  OFFSET[p] = bit & 31;
}

/**
 * QuickXorHash of the synthetic content of `size` bytes built from `base`, without
 * generating it: full blocks are identical except for their 4-byte counters, so they
 * cancel out pairwise and only the parity, the XOR of the counters and the tail remain.
 */
export function syntheticContentHash(base: Uint8Array, size: number): string {
  const cells = new Uint32Array(5);
  const fullBlocks = Math.floor(size / BLOCK);
  const tail = size - fullBlocks * BLOCK;
  // Bytes 4.. of the base block count once for an odd number of full blocks, and once
  // more for the tail's prefix (two XORs of the same byte cancel), so exactly the bytes
  // in [lo, hi) remain.
  const odd = (fullBlocks & 1) === 1;
  const lo = odd ? Math.max(4, tail) : 4;
  const hi = odd ? BLOCK : Math.max(4, tail);
  for (let p = lo; p < hi; p++) {
    const b = base[p];
    const off = OFFSET[p];
    const c = CELL[p];
    cells[c] ^= b << off;
    if (off > 24) cells[c === 4 ? 0 : c + 1] ^= b >>> (32 - off);
  }
  // Counter bytes: blocks 0..fullBlocks-1 contribute their index; the tail block (index
  // fullBlocks) contributes the first min(tail, 4) bytes of its own index.
  const counters = fullBlocks > 0 ? xorUpTo(fullBlocks - 1) : 0;
  for (let p = 0; p < 4; p++) {
    let b = (counters >>> (8 * p)) & 0xff;
    if (p < tail) b ^= (fullBlocks >>> (8 * p)) & 0xff;
    if (b) xorByteAt(cells, p * SHIFT, b);
  }
  return finish(cells, size);
}

/** Fills `out` with content bytes [start, start + out.length) of the synthetic file. */
export function fillContent(base: Buffer, start: number, out: Buffer): void {
  let o = 0;
  let pos = start;
  while (o < out.length) {
    const block = Math.floor(pos / BLOCK);
    const p = pos - block * BLOCK;
    const n = Math.min(BLOCK - p, out.length - o);
    base.copy(out, o, p, p + n);
    // Overwrite the counter bytes that fall inside this piece.
    for (let c = p; c < 4 && c < p + n; c++) out[o + (c - p)] = (block >>> (8 * c)) & 0xff;
    o += n;
    pos += n;
  }
}
