import { z } from 'zod';
import { OUTAGE_RETRY_AFTER_SECONDS } from '../../common/outage';
import { json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';
import * as out from '../schemas/responses';

/** A probe never holds /ready longer than this, whatever the connection's own settings. */
const PROBE_TIMEOUT_MS = 2_000;

type PartState = 'ok' | 'unavailable';

/**
 * The probes (no key; `/ready` limited per client address in a budget of its own, api/app.ts):
 * - `GET /health`, liveness: 200 `{ status: "ok" }` while the process's event loop runs. It
 *   calls nothing: restarting the API does not bring a database back, so an outage must not
 *   make an orchestrator restart it. (Nango's server has the same route, so a probe written for
 *   Nango keeps working.)
 * - `GET /ready`, readiness: 200 `{ status: "ok", database: "ok", orchestrator: "ok" }` when
 *   the API can reach MongoDB and Temporal, else 503 with Retry-After and what is wrong:
 *   `unavailable` naming the part that is down, or `shutting_down` while the process drains
 *   after a stop signal. It answers within about two seconds either way.
 * While shutting down, every answer also says `Connection: close` (api/middleware/draining.ts).
 */
export const healthRoutes = routeGroup({
  mount: '',
  access: 'probe',
  tag: 'Operations',
  routes: [
    route({
      method: 'get',
      path: '/health',
      auth: 'none',
      operationId: 'getHealth',
      summary: 'Liveness: the process runs (no key; calls nothing)',
      description:
        'Answers 200 while the process’s event loop runs. It checks no dependency: restarting the API does not bring a database back. Readiness is `GET /ready`.',
      responses: { 200: json(out.healthResponse) },
      handler({ res }) {
        res.json({ status: 'ok' });
      },
    }),

    route({
      method: 'get',
      path: '/ready',
      auth: 'none',
      operationId: 'getReadiness',
      summary: 'Readiness: MongoDB and Temporal reachable, not shutting down (no key)',
      description:
        'A load balancer sends traffic while this answers 200. 503 with `Retry-After` when MongoDB or Temporal cannot be reached (the part that is down says `unavailable`), or `status: shutting_down` while the process drains after SIGTERM.',
      responses: {
        200: json(out.readinessResponse),
        503: {
          ...json(out.readinessResponse, 'A part is down, or the process is shutting down.'),
          headers: z.object({ 'retry-after': z.string().describe('Seconds to wait.') }),
        },
        429: errorResponses([429], false)['429'],
      },
      async handler({ deps, res }) {
        const [database, orchestrator] = await Promise.all([
          probe(() => deps.stores.db.command({ ping: 1 })),
          probe(() => deps.temporal.connection.withDeadline(Date.now() + PROBE_TIMEOUT_MS, () => deps.temporal.workflowService.getSystemInfo({}))),
        ]);
        const status = deps.lifecycle?.shuttingDown ? 'shutting_down' : database === 'ok' && orchestrator === 'ok' ? 'ok' : 'unavailable';
        if (status !== 'ok') res.status(503).set('Retry-After', String(OUTAGE_RETRY_AFTER_SECONDS));
        // The stop may have come while the probes ran, after this request passed the draining middleware.
        if (status === 'shutting_down') res.set('Connection', 'close');
        res.json({ status, database, orchestrator });
      },
    }),
  ],
});

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
