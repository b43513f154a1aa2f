import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { parseInput } from '../validate';
import { connectionHeaders, listRecordsQuery } from '../schemas/records';
import { findConnection } from '../services/connection-lookup';
import { listRecordsPage } from '../services/record-listing';

/** `GET /records`: the sync cache, paged by an opaque, stable cursor. */
export function recordsRouter(deps: ApiDeps): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    const headers = parseInput(connectionHeaders, req.headers, 'invalid_headers');
    const q = parseInput(listRecordsQuery, req.query, 'invalid_query_params');
    const { connection } = await findConnection(deps.stores, environmentOf(res), headers['provider-config-key'], headers['connection-id']);
    res.json(await listRecordsPage(deps.stores, deps.registry, connection, q));
  });

  return router;
}
