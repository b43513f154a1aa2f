import { Router } from 'express';
import { OUTAGE_RETRY_AFTER_SECONDS } from '../outage';
import type { ApiDeps } from '../deps';

/** A probe never holds /health longer than this, whatever the connection's own settings. */
const PROBE_TIMEOUT_MS = 2_000;

type PartState = 'ok' | 'unavailable';

/**
 * `GET /health` (no key): 200 when the API can reach both MongoDB and Temporal, else 503
 * with Retry-After and which part is down, e.g. `{ status: "unavailable", database:
 * "unavailable", orchestrator: "ok" }`, so a load balancer or an operator sees the cause.
 * It answers within about two seconds either way.
 */
export function healthRouter(deps: ApiDeps): Router {
  const router = Router();
  router.get('/health', async (_req, res) => {
    const [database, orchestrator] = await Promise.all([
      probe(() => deps.stores.db.command({ ping: 1 })),
      probe(() => deps.temporal.connection.withDeadline(Date.now() + PROBE_TIMEOUT_MS, () => deps.temporal.workflowService.getSystemInfo({}))),
    ]);
    const healthy = database === 'ok' && orchestrator === 'ok';
    if (!healthy) res.status(503).set('Retry-After', String(OUTAGE_RETRY_AFTER_SECONDS));
    res.json({ status: healthy ? 'ok' : 'unavailable', database, orchestrator });
  });
  return router;
}

async function probe(check: () => Promise<unknown>): Promise<PartState> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), PROBE_TIMEOUT_MS)));
  try {
    return (await Promise.race([check().then(() => 'ok' as const), late])) === 'ok' ? 'ok' : 'unavailable';
  } catch {
    return 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}
