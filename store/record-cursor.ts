import { BadRequestError } from '../common/errors';
import type { RecordPosition } from './record-pages';

/**
 * The `GET /records` cursor, opaque to the app: a position in the scope's change order
 * (change sequence, then id for ties), which is also a key of the scope's change feed
 * (store/record-feed.ts); cursors issued before the feed existed have the same form and read
 * on from the same place. An empty id is the position just before every change of its seq:
 * the cursor a `sync` webhook carries for the run whose first change has that seq.
 */
export function encodeRecordCursor(position: RecordPosition): string {
  return Buffer.from(`v2:${position.seq}:${position.id}`).toString('base64url');
}

export function decodeRecordCursor(cursor: string): RecordPosition {
  const m = /^v2:(\d+):(.*)$/s.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new BadRequestError('invalid_cursor', 'The cursor is not one this API returned.');
  return { seq: Number(m[1]), id: m[2] };
}

/** The cursor before every change with a seq above `seq`: reading from it starts at the first change made after it. */
export function recordCursorAfterSeq(seq: number): string {
  return encodeRecordCursor({ seq: seq + 1, id: '' });
}
