import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { parseInput } from '../validate';
import { listLogsQuery } from '../schemas/logs';
import { listRequestLogs } from '../services/request-log-listing';

/** `GET /logs`: the environment's third-party requests (syncs, actions, verifications, connect flows), newest first. */
export function logsRouter(deps: ApiDeps): Router {
  const router = Router();

  router.get('/', async (req, res) => {
    const q = parseInput(listLogsQuery, req.query, 'invalid_query_params');
    res.json(await listRequestLogs(deps.stores, environmentOf(res), q));
  });

  return router;
}
