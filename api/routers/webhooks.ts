import { Router } from 'express';
import type { ApiDeps } from '../deps';
import { environmentOf } from '../middleware/auth';
import { parseInput } from '../validate';
import { bulkReplayBody, listWebhookEventsQuery, webhookEventParams } from '../schemas/webhooks';
import { webhookDeps } from '../services/connection-authorization';
import { getWebhookEvent, listWebhookEvents, replayFailedWebhookEvents, replayWebhookEvent } from '../services/webhook-events';

/** The environment's outbound webhook events: listing, one event with its attempts, replays (single and bulk). */
export function webhooksRouter(deps: ApiDeps): Router {
  const router = Router();

  router.get('/events', async (req, res) => {
    const q = parseInput(listWebhookEventsQuery, req.query, 'invalid_query_params');
    res.json(await listWebhookEvents(deps, environmentOf(res), q));
  });

  // Before `/events/:id/...`: `replay` is no event id.
  router.post('/events/replay', async (req, res) => {
    const body = parseInput(bulkReplayBody, req.body, 'invalid_body');
    res.json(await replayFailedWebhookEvents(webhookDeps(deps), environmentOf(res), body));
  });

  router.get('/events/:id', async (req, res) => {
    const { id } = parseInput(webhookEventParams, req.params, 'invalid_path_params');
    res.json(await getWebhookEvent(deps, environmentOf(res), id));
  });

  router.post('/events/:id/replay', async (req, res) => {
    const { id } = parseInput(webhookEventParams, req.params, 'invalid_path_params');
    res.status(202).json(await replayWebhookEvent(webhookDeps(deps), environmentOf(res), id));
  });

  return router;
}
