import { NotFoundError } from '../../common/errors';
import { mcpEnabled, type EnvironmentDoc, type EnvironmentSettings } from '../../store/environments';
import { rotateWebhookSigningKey, SIGNING_KEY_GRACE_MS } from '../../webhooks/signing-key';
import type { ApiDeps } from '../deps';
import { applyBrandingPatch, logoPath } from '../services/connect-branding';
import { environmentOf } from '../middleware/auth';
import { json } from '../openapi/content';
import { errorResponses } from '../openapi/errors';
import { route, routeGroup } from '../routing/route';
import { patchEnvironmentBody } from '../schemas/environment';
import * as out from '../schemas/responses';
import type { EnvironmentView } from '../schemas/responses';

/** The calling key's environment: webhook URLs, webhook toggles, the signing key, the Connect page's branding. */
export const environmentRoutes = routeGroup({
  mount: '/environment',
  access: 'secret-key',
  tag: 'Environment',
  routes: [
    route({
      method: 'get',
      path: '/environment',
      auth: 'secret-key',
      operationId: 'getEnvironment',
      summary: 'The environment’s settings',
      responses: { 200: json(out.environmentResponse), ...errorResponses([]) },
      async handler({ deps, res }) {
        res.json({ data: present(await load(deps, environmentOf(res))) });
      },
    }),

    route({
      method: 'patch',
      path: '/environment',
      auth: 'secret-key',
      operationId: 'updateEnvironment',
      summary: 'Change webhook URLs and toggles, and the Connect page’s branding',
      description:
        '`branding.logo_url` is fetched once, now (PNG, JPEG or WebP, at most 256 KB, through the egress policy), and served by Weft from then on. ' +
        'A logo that cannot be taken is a 400 (`egress_refused`, `logo_fetch_failed`, `logo_too_large`, `logo_type_unsupported`) and nothing is changed.',
      request: { body: patchEnvironmentBody },
      responses: { 200: json(out.environmentResponse), ...errorResponses([]) },
      async handler({ deps, res, input }) {
        const { branding, ...body } = input.body();
        // Weft POSTs to these itself: a literal private/loopback/link-local address is refused now (400 egress_refused).
        for (const field of ['webhook_url', 'secondary_webhook_url', 'alert_webhook_url'] as const) {
          const url = body[field];
          if (url) deps.egress.webhooks.checkUrl(url, field);
        }
        const patch: Partial<EnvironmentSettings> = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
        // Last: the logo is fetched only once everything else was accepted, and refused before anything is stored.
        if (branding) patch.branding = await applyBrandingPatch(deps, (await load(deps, environmentOf(res))).branding, branding);
        const env = await deps.stores.environments.updateSettings(environmentOf(res), patch);
        if (!env) throw new NotFoundError('unknown_environment', `Environment "${environmentOf(res)}" does not exist.`);
        res.json({ data: present(env) });
      },
    }),

    route({
      method: 'post',
      path: '/environment/webhook-signing-key/rotate',
      auth: 'secret-key',
      operationId: 'rotateWebhookSigningKey',
      summary: 'Rotate the webhook signing key',
      responses: { 200: json(out.signingKeyRotationResponse, 'The new key, shown this once'), ...errorResponses([]) },
      async handler({ deps, res }) {
        const rotated = await rotateWebhookSigningKey(deps.stores.environments, deps.cipher, environmentOf(res));
        deps.logger.info({ environment: environmentOf(res) }, 'webhook signing key rotated');
        // Shown once: keep it out of any cache between Weft and the caller.
        res.set('cache-control', 'no-store');
        res.json({
          data: {
            webhook_signing_key: rotated.key,
            previous_key_valid_until: rotated.previousValidUntil?.toISOString() ?? null,
          },
        });
      },
    }),
  ],
});

async function load(deps: ApiDeps, name: string): Promise<EnvironmentDoc> {
  const env = await deps.stores.environments.get(name);
  if (!env) throw new NotFoundError('unknown_environment', `Environment "${name}" does not exist.`);
  return env;
}

/** The body's shape is api/schemas/responses.ts's, which the OpenAPI document shows. */
function present(env: EnvironmentDoc): EnvironmentView {
  const rotatedAt = env.webhook_signing_key_rotated_at;
  const previousValidUntil = rotatedAt && env.previous_webhook_signing_key_encrypted ? new Date(rotatedAt.getTime() + SIGNING_KEY_GRACE_MS) : null;
  return {
    name: env._id,
    webhook_url: env.webhook_url,
    secondary_webhook_url: env.secondary_webhook_url,
    alert_webhook_url: env.alert_webhook_url,
    send_auth_webhooks: env.send_auth_webhooks,
    send_sync_completion_always: env.send_sync_completion_always,
    send_sync_error_webhooks: env.send_sync_error_webhooks,
    mcp_enabled: mcpEnabled(env),
    // The key itself is shown only by the rotate call.
    webhook_signing_key_hint: env.webhook_signing_key_hint ? `whsec_…${env.webhook_signing_key_hint}` : null,
    webhook_signing_key_rotated_at: rotatedAt?.toISOString() ?? null,
    previous_webhook_signing_key_valid_until: previousValidUntil && previousValidUntil.getTime() > Date.now() ? previousValidUntil.toISOString() : null,
    branding: {
      app_name: env.branding.app_name,
      logo_url: env.branding.logo?.source_url ?? null,
      logo: env.branding.logo
        ? {
            url: logoPath(env.branding.logo),
            content_type: env.branding.logo.content_type,
            size: env.branding.logo.size,
            fetched_at: env.branding.logo.fetched_at.toISOString(),
          }
        : null,
      primary_color: env.branding.primary_color,
      theme: env.branding.theme,
    },
    created_at: env.created_at.toISOString(),
    updated_at: env.updated_at.toISOString(),
  };
}
