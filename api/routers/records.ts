import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { parseInput } from '../validate';
import { connectionHeaders, listRecordsQuery, pruneRecordsBody } from '../schemas/records';
import { findConnection } from '../../store/connection-lookup';
import { findReadConnection, listRecordsPage } from '../services/record-listing';
import { pruneRecords } from '../services/record-pruning';

/** `GET /records`: the sync cache, paged by an opaque, stable cursor; `PATCH /records/prune` drops payloads up to one. */
export function recordsRouter(deps: ApiDeps): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    const headers = parseInput(connectionHeaders, req.headers, 'invalid_headers');
    const q = parseInput(listRecordsQuery, req.query, 'invalid_query_params');
    const connection = await findReadConnection(deps.stores, environmentOf(res), headers['provider-config-key'], headers['connection-id']);
    res.json(await listRecordsPage(deps.stores, deps.registry, connection, q));
  });

  router.patch('/prune', async (req, res) => {
    const headers = parseInput(connectionHeaders, req.headers, 'invalid_headers');
    const body = parseInput(pruneRecordsBody, req.body, 'invalid_body');
    const { connection } = await findConnection(deps.stores, environmentOf(res), headers['provider-config-key'], headers['connection-id']);
    res.json(await pruneRecords(deps.stores, deps.registry, connection, body));
  });

  return router;
}
