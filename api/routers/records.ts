import { Router } from 'express';
import { BadRequestError } from '../../common/errors';
import type { RecordAction, RecordDoc } from '../../store/records';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { parseInput } from '../validate';
import { connectionHeaders, listRecordsQuery } from '../schemas/records';
import { findConnection } from '../services/connection-lookup';

/** `GET /records`: the sync cache, paged by an opaque, stable cursor. */
export function recordsRouter(deps: ApiDeps): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    const env = environmentOf(res);
    const headers = parseInput(connectionHeaders, req.headers, 'invalid_headers');
    const q = parseInput(listRecordsQuery, req.query, 'invalid_query_params');
    const { connection } = await findConnection(deps.stores, env, headers['provider-config-key'], headers['connection-id']);
    const actions = q.filter?.split(',').map((s) => s.trim().toUpperCase() as RecordAction);
    const ids = q.ids === undefined ? undefined : ([] as string[]).concat(q.ids);
    const page = await deps.stores.records.list(
      { environment: env, connection: connection._id, model: q.model, variant: q.variant },
      {
        after: q.cursor ? decodeCursor(q.cursor) : undefined,
        limit: q.limit,
        modifiedAfter: q.modified_after ? new Date(q.modified_after) : undefined,
        actions,
        ids,
      },
    );
    res.json({
      records: page.records.map(present),
      next_cursor: page.hasMore ? encodeCursor(page.records[page.records.length - 1]) : null,
    });
  });

  return router;
}

function present(doc: RecordDoc) {
  return {
    ...doc.data,
    _weft_metadata: {
      first_seen_at: doc.first_seen_at.toISOString(),
      last_modified_at: doc.last_modified_at.toISOString(),
      last_action: doc.last_action,
      deleted_at: doc.deleted_at ? doc.deleted_at.toISOString() : null,
      cursor: encodeCursor(doc),
    },
  };
}

/** Opaque to the app: the record's position (change sequence, then id for ties). */
export function encodeCursor(doc: Pick<RecordDoc, 'seq' | 'id'>): string {
  return Buffer.from(`v2:${doc.seq}:${doc.id}`).toString('base64url');
}

export function decodeCursor(cursor: string): { seq: number; id: string } {
  const m = /^v2:(\d+):(.+)$/s.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new BadRequestError('invalid_cursor', 'The cursor is not one this API returned.');
  return { seq: Number(m[1]), id: m[2] };
}
