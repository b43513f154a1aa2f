import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import { z } from 'zod';
import { openIntegrationCredentials } from '../../auth/credential-source';
import { BadRequestError, NotFoundError, WeftError } from '../../common/errors';
import type { SignedWebhooks, SubscriptionNotifications } from '../../runtime/types';
import { keyId } from '../../store/key-ids';
import { providerDeliveryId } from '../../store/provider-deliveries';
import type { ApiDeps } from '../deps';
import { json, text } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';

/** A delivery's body, at most (GitHub caps its payloads at 25 MB; the events Weft takes in are far smaller). */
const MAX_DELIVERY_BYTES = 1024 * 1024;

const intakeParams = z.object({
  environment: z.string().describe('The environment the integration is in (`dev`, `prod`).'),
  integration: z.string().describe('The integration’s unique key.'),
});

const intakeAnswer = z.object({
  id: z.string().nullable().describe('The delivery as Weft stored it (the first, when a delivery of notifications was stored as several; null when none was).'),
  duplicate: z.boolean().describe('A redelivery of one stored already: nothing new was stored.'),
  stored: z.number().int().describe('How many deliveries were stored: one per signed delivery, one per verified notification.'),
});

/**
 * The providers' webhook intake: one public URL per integration, given to the provider (a
 * GitHub App's webhook URL). A delivery is verified with the integration's webhook secret as
 * its provider signs (the integration folder's `webhooks` data) and stored before it is
 * answered; one that does not verify is refused and stored nowhere. What a delivery then does
 * (forwarded to the app, a sync run) starts from the stored copy.
 */
export const providerWebhookRoutes = routeGroup({
  mount: '/webhooks/providers',
  access: 'public',
  tag: 'Provider webhooks',
  // The signature is over the raw body: read here, before any parser.
  rawBody: true,
  routes: [
    route({
      method: 'post',
      path: '/webhooks/providers/:environment/:integration',
      auth: 'none',
      operationId: 'receiveProviderWebhook',
      summary: 'A webhook delivery from the integration’s provider (signed with its webhook secret, or notifications carrying their subscription’s secret)',
      request: { params: intakeParams },
      responses: {
        202: json(intakeAnswer, 'Verified and stored'),
        200: {
          description: 'A redelivery: stored already (JSON); or the validation handshake of notifications, answered with its token (text)',
          content: { ...json(intakeAnswer).content, ...text('').content },
        },
        ...errorResponses([400, 401, 404, 409, 413, 429], false),
      },
      async handler({ deps, req, res, input }) {
        const { environment, integration: key } = input.params();
        const integration = await deps.stores.integrations.getRecent(environment, key);
        if (!integration) throw new NotFoundError('unknown_integration', `No integration "${key}" in environment "${environment}".`);
        const webhooks = deps.registry.get(integration.provider)?.provider.webhooks;
        if (!webhooks) throw new NotFoundError('webhooks_not_supported', `Weft takes in no webhooks from ${integration.provider}.`);
        const target = { environment, key, provider: integration.provider };
        if (webhooks.kind === 'subscription-notifications') return receiveNotifications(deps, req, res, webhooks, target);
        if (webhooks.kind === 'secret-path') throw unknownSecretPath(integration.provider);
        const secret = openIntegrationCredentials(deps.cipher, integration)?.webhook_secret;
        if (!secret) {
          throw new WeftError(
            'webhook_secret_not_set',
            `Integration "${key}" has no webhook secret: set credentials.webhook_secret (PATCH /integrations/${key}) to the one the provider signs with.`,
            409,
          );
        }
        const body = await rawBody(req, res);
        verifySignature(webhooks, secret, req, body);
        // The provider's own: no longer counted against its address (res.locals.verified, api/app.ts).
        (res.locals.verified as (() => void) | undefined)?.();
        const deliveryId = headerOf(req, webhooks.deliveryIdHeader);
        const event = headerOf(req, webhooks.eventHeader);
        if (!isJsonObject(parseJson(body))) throw new BadRequestError('invalid_delivery', 'The delivery’s body is not a JSON object.');
        await takeIntegrationBudget(deps, res, environment, key);
        const stored = await deps.stores.providerDeliveries.add({
          environment,
          provider_config_key: key,
          provider: integration.provider,
          delivery_id: deliveryId,
          event,
          body: body.toString('utf8'),
          received_at: new Date(),
        });
        res.status(stored ? 202 : 200).json({ id: providerDeliveryId(environment, key, deliveryId), duplicate: !stored, stored: stored ? 1 : 0 });
      },
    }),

    route({
      method: 'post',
      path: '/webhooks/providers/:environment/:integration/:secret',
      auth: 'none',
      operationId: 'receiveProviderWebhookAtSecretPath',
      summary: 'A webhook delivery from a provider that signs nothing (Luma), at the URL of the one subscription it is for',
      request: { params: intakeParams.extend({ secret: z.string().describe('The subscription’s secret: its URL’s last segment.') }) },
      responses: { 202: json(intakeAnswer, 'Verified and stored'), ...errorResponses([400, 404, 413, 429], false) },
      async handler({ deps, req, res, input }) {
        const { environment, integration: key, secret } = input.params();
        const integration = await deps.stores.integrations.getRecent(environment, key);
        if (!integration) throw new NotFoundError('unknown_integration', `No integration "${key}" in environment "${environment}".`);
        const webhooks = deps.registry.get(integration.provider)?.provider.webhooks;
        if (webhooks?.kind !== 'secret-path')
          throw new NotFoundError('webhooks_not_supported', `Weft takes in no webhooks from ${integration.provider} at such a URL.`);
        const subscription = await deps.stores.providerDeliveries.subscriptionBySecret(environment, key, createHash('sha256').update(secret).digest('hex'));
        // The URL is the credential: one no live subscription was given is unknown, whatever it carries.
        if (!subscription) throw unknownSecretPath(integration.provider);
        const raw = await rawBody(req, res);
        const body = parseJson(raw);
        const event = isJsonObject(body) ? body[webhooks.eventField] : undefined;
        if (typeof event !== 'string' || event.length === 0 || event.length > 100) {
          throw new BadRequestError('invalid_delivery', `The delivery is not a JSON object naming its event in "${webhooks.eventField}".`);
        }
        (res.locals.verified as (() => void) | undefined)?.();
        await takeIntegrationBudget(deps, res, environment, key);
        const deliveryId = randomUUID();
        await deps.stores.providerDeliveries.add({
          environment,
          provider_config_key: key,
          provider: integration.provider,
          delivery_id: deliveryId,
          event,
          body: raw.toString('utf8'),
          route: `subscription:${subscription.subscription_id}`,
          received_at: new Date(),
        });
        res.status(202).json({ id: providerDeliveryId(environment, key, deliveryId), duplicate: false, stored: 1 });
      },
    }),
  ],
});

function unknownSecretPath(provider: string): WeftError {
  return new NotFoundError('unknown_webhook', `No webhook subscription of ${provider} has this URL.`);
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Notifications in one delivery, at most (Graph batches up to a few dozen). */
const MAX_NOTIFICATIONS = 1_000;

/**
 * Notifications of the subscriptions Weft made for the integration's connections (Graph):
 * the handshake's token echoed as `text/plain`; otherwise each notification is checked
 * against its subscription's secret (its hash, in constant time) and stored as a delivery of
 * its own (a random id: Graph's notifications carry none, and two alike are two changes).
 * A notification of a subscription Weft no longer has is dropped (Graph may still send a few
 * after a delete); a wrong secret refuses the whole delivery: 401 `invalid_client_state`.
 */
async function receiveNotifications(
  deps: ApiDeps,
  req: Request,
  res: Response,
  webhooks: SubscriptionNotifications,
  target: { environment: string; key: string; provider: string },
): Promise<void> {
  const token = req.query[webhooks.validationQuery];
  if (typeof token === 'string') {
    // Graph's handshake (a subscription being made or moved): the token, exactly, as text within 10 s.
    res.status(200).type('text/plain').send(token);
    return;
  }
  const body = parseJson(await rawBody(req, res));
  const list = isJsonObject(body) ? body[webhooks.listField] : undefined;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_NOTIFICATIONS || !list.every(isJsonObject)) {
    throw new BadRequestError('invalid_delivery', `The delivery has no list of notifications in "${webhooks.listField}".`);
  }
  const verified: Array<Record<string, unknown>> = [];
  for (const notification of list) {
    const subscriptionId = notification[webhooks.subscriptionIdField];
    if (typeof subscriptionId !== 'string' || subscriptionId.length === 0 || subscriptionId.length > 200)
      throw new BadRequestError('invalid_delivery', `A notification has no ${webhooks.subscriptionIdField}.`);
    const subscription = await deps.stores.providerDeliveries.getSubscription(target.environment, target.key, subscriptionId);
    if (!subscription) continue;
    const given = notification[webhooks.clientStateField];
    const hash = createHash('sha256')
      .update(typeof given === 'string' ? given : '')
      .digest();
    if (!timingSafeEqual(hash, Buffer.from(subscription.client_state_sha256, 'hex'))) {
      throw new WeftError('invalid_client_state', `A notification's ${webhooks.clientStateField} is not its subscription's.`, 401);
    }
    verified.push(notification);
  }
  (res.locals.verified as (() => void) | undefined)?.();
  if (verified.length) await takeIntegrationBudget(deps, res, target.environment, target.key);
  const receivedAt = new Date();
  const ids: string[] = [];
  for (const notification of verified) {
    const deliveryId = randomUUID();
    const lifecycle = notification[webhooks.lifecycleField];
    await deps.stores.providerDeliveries.add({
      environment: target.environment,
      provider_config_key: target.key,
      provider: target.provider,
      delivery_id: deliveryId,
      event: typeof lifecycle === 'string' && lifecycle.length <= 100 ? lifecycle : webhooks.changeEvent,
      body: JSON.stringify(notification),
      received_at: receivedAt,
    });
    ids.push(providerDeliveryId(target.environment, target.key, deliveryId));
  }
  res.status(202).json({ id: ids[0] ?? null, duplicate: false, stored: ids.length });
}

/**
 * One verified delivery of the integration's budget (WEFT_PROVIDER_WEBHOOK_RATE_LIMIT per
 * minute, shared by every API process); past it, 429 `rate_limited` with `Retry-After`.
 */
async function takeIntegrationBudget(deps: ApiDeps, res: Response, environment: string, key: string): Promise<void> {
  const policy = deps.settings.providerWebhookRateLimit;
  if (!policy?.limit) return;
  const decision = await deps.stores.apiRateCounters.take(`provider-webhooks|${keyId(environment, key)}`, policy);
  if (decision.allowed) return;
  const retryAfter = Math.max(1, Math.ceil((decision.resetAt - Date.now()) / 1000));
  res.setHeader('Retry-After', String(retryAfter));
  throw new WeftError(
    'rate_limited',
    `Integration "${key}" received more than ${policy.limit} webhook deliveries this minute; retry after ${retryAfter} s.`,
    429,
  );
}

/** The request's body as bytes, up to MAX_DELIVERY_BYTES (413 beyond). */
function rawBody(req: Request, res: Response): Promise<Buffer> {
  const read = express.raw({ type: () => true, limit: MAX_DELIVERY_BYTES });
  return new Promise((resolve, reject) =>
    read(req, res, (err?: unknown) => (err ? reject(err) : resolve(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)))),
  );
}

/** One header's value, required: a delivery without it is not one the provider sent. */
function headerOf(req: Request, name: string): string {
  const value = req.headers[name];
  if (typeof value !== 'string' || value.length === 0 || value.length > 200)
    throw new BadRequestError('invalid_delivery', `The delivery has no ${name} header.`);
  return value;
}

/** The provider's HMAC of the raw body with the secret, compared in constant time; 401 `invalid_signature` otherwise. */
function verifySignature(webhooks: SignedWebhooks, secret: string, req: Request, body: Buffer): void {
  const { header, prefix, algorithm } = webhooks.signature;
  const given = req.headers[header];
  const expected = Buffer.from(`${prefix}${createHmac(algorithm, secret).update(body).digest('hex')}`);
  const actual = Buffer.from(typeof given === 'string' ? given : '');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    throw new WeftError('invalid_signature', `The delivery's ${header} is missing or is not the integration's webhook secret's signature of its body.`, 401);
  }
}
