import { environmentOf } from '../middleware/auth';
import { json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';
import * as out from '../schemas/responses';
import { bulkReplayBody, listWebhookEventsQuery, webhookEventParams } from '../schemas/webhooks';
import { webhookDeps } from '../services/connection-authorization';
import { getWebhookEvent, listWebhookEvents, replayFailedWebhookEvents, replayWebhookEvent } from '../services/webhook-events';

/** The environment's outbound webhook events: listing, one event with its attempts, replays (single and bulk). */
export const webhookRoutes = routeGroup({
  mount: '/webhooks',
  access: 'secret-key',
  tag: 'Webhook events',
  routes: [
    route({
      method: 'get',
      path: '/webhooks/events',
      auth: 'secret-key',
      operationId: 'listWebhookEvents',
      summary: 'Outbound webhook events',
      request: { query: listWebhookEventsQuery },
      responses: { 200: json(out.webhookEventListResponse), ...errorResponses([]) },
      async handler({ deps, res, input }) {
        res.json(await listWebhookEvents(deps, environmentOf(res), input.query()));
      },
    }),

    // Before `/events/:id/...`: `replay` is no event id.
    route({
      method: 'post',
      path: '/webhooks/events/replay',
      auth: 'secret-key',
      operationId: 'replayFailedWebhookEvents',
      summary: 'Replay the failed events of a time range',
      request: { body: bulkReplayBody },
      responses: { 200: json(out.webhookBulkReplayResponse), ...errorResponses([]) },
      async handler({ deps, res, input }) {
        res.json(await replayFailedWebhookEvents(webhookDeps(deps), environmentOf(res), input.body()));
      },
    }),

    route({
      method: 'get',
      path: '/webhooks/events/:id',
      auth: 'secret-key',
      operationId: 'getWebhookEvent',
      summary: 'One webhook event with its delivery attempts',
      request: { params: webhookEventParams },
      responses: { 200: json(out.webhookEventResponse), ...errorResponses([404]) },
      async handler({ deps, res, input }) {
        res.json(await getWebhookEvent(deps, environmentOf(res), input.params().id));
      },
    }),

    route({
      method: 'post',
      path: '/webhooks/events/:id/replay',
      auth: 'secret-key',
      operationId: 'replayWebhookEvent',
      summary: 'Replay one webhook event',
      request: { params: webhookEventParams },
      responses: { 202: json(out.webhookReplayResponse, 'Requeued'), ...errorResponses([404, 409]) },
      async handler({ deps, res, input }) {
        res.status(202).json(await replayWebhookEvent(webhookDeps(deps), environmentOf(res), input.params().id));
      },
    }),
  ],
});
