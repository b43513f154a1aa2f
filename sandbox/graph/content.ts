/**
 * File bytes for the download URL: synthetic content (see quickxor.ts) streamed in chunks,
 * so a 300 MB file costs no memory, and byte ranges for `Range` requests.
 */
import type http from 'node:http';
import { hash32 } from '../shared/prng';
import { baseBlock, fillContent } from './quickxor';
import type { DriveStore } from './store';

const T_CONTENT = 10;

/** The content key of an item at its current content version (cTag version). */
export function contentKeyFor(store: DriveStore, i: number): number {
  return hash32(store.dk, T_CONTENT, i, store.cversion[i]);
}

export function contentBase(store: DriveStore, i: number): Buffer {
  return baseBlock(contentKeyFor(store, i));
}

const CHUNK = 64 * 1024;

/**
 * Writes bytes [start, end] (inclusive) of the content, respecting back-pressure.
 * Stops quietly if the client goes away.
 */
export function streamContent(res: http.ServerResponse, base: Buffer, start: number, end: number): void {
  let pos = start;
  const pump = (): void => {
    while (pos <= end) {
      if (res.destroyed) return;
      const n = Math.min(CHUNK, end - pos + 1);
      const buf = Buffer.allocUnsafe(n);
      fillContent(base, pos, buf);
      pos += n;
      if (!res.write(buf)) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  pump();
}

export type ByteRange = { start: number; end: number } | 'unsatisfiable' | null;

/**
 * Parses a single `bytes=a-b`, `bytes=a-` or `bytes=-n` range. Multiple ranges or other
 * units return null (the whole file is sent with 200, which RFC 9110 allows).
 */
export function parseRange(header: string | undefined, size: number): ByteRange {
  if (!header) return null;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m) return null;
  const [, a, b] = m;
  if (a === '' && b === '') return null;
  if (a === '') {
    const n = Number(b);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(a);
  if (start >= size) return 'unsatisfiable';
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  if (end < start) return null;
  return { start, end };
}
