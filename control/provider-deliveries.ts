import { createHash } from 'node:crypto';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { BASE_VARIANT } from '../activities/sync-contracts';
import { sealedAt } from '../auth/credential-cipher';
import type { Logger } from '../common/logger';
import { lazyInstruments } from '../common/telemetry';
import type { ProviderWebhooks } from '../runtime/types';
import type { ConnectionDoc } from '../store/connections';
import type { ClaimedDelivery, ProviderDeliveryDoc } from '../store/provider-deliveries';
import { queueWebhook, type OutboxDeps } from '../webhooks/outbox';
import { runOnce } from '../store/migrations';
import type { ControlDeps } from './deps';
import { runSyncForChange, schedulePaused } from './provider-changes';
import { signalSubscriptionLifecycle } from './connection-subscriptions';
import type { SubscriptionLifecycle } from '../activities/subscription-contracts';
import type { SyncSelector } from './sync-runs';

/** What processing provider deliveries needs: starting runs, and the outbox the `forward` events go to. */
export interface DeliveryProcessingDeps extends ControlDeps {
  outbox: OutboxDeps;
  logger: Logger;
  /** Runs a sync's onWebhook for one delivery and connection (activities/provider-webhook-handler.ts); syncs with one are not run. */
  handleWithSync?: SyncWebhookHandler;
}

/** Hands one delivery to a sync's onWebhook for one connection; rejects when it failed (the delivery is then taken again). */
export type SyncWebhookHandler = (connection: ConnectionDoc, syncName: string, delivery: { id: string; event: string; payload: unknown }) => Promise<void>;

/** A claimed delivery is this process's for this long; past it (the process died), another takes it again. */
const CLAIM_LEASE_MS = 60_000;

/**
 * One pass over the deliveries the intake stored: each due one is claimed, attributed to its
 * connections (the route key its signed body names, e.g. the GitHub App installation), sent
 * to the app as a `forward` webhook per connection, and makes the syncs that subscribe to its
 * event run (runSyncForChange: one request per connection and sync however many deliveries
 * of the pass name it). A delivery is marked done only once all of that is stored or
 * started; one that failed (Temporal out of reach) is taken again when its claim runs out,
 * and doing it twice sends the same events (their ids derive from the delivery) and at most
 * one more run. Resolves with the number of due deliveries found.
 */
export async function processProviderDeliveries(deps: DeliveryProcessingDeps, limit = 100): Promise<number> {
  const store = deps.stores.providerDeliveries;
  const now = new Date();
  const due = await store.due(now, limit);
  const claimed = (await Promise.all(due.map((entry) => store.claim(entry, now, CLAIM_LEASE_MS)))).filter((c): c is ClaimedDelivery => c !== null);
  if (claimed.length === 0) return due.length;

  const plans = await Promise.all(claimed.map((c) => planDelivery(deps, c.doc)));
  // One run request per (connection, sync) for the whole pass: a burst is coalesced here.
  const runs = new Map<string, Promise<unknown>>();
  const runKey = (connection: ConnectionDoc, sync: SyncSelector) => `${connection._id}/${sync.name}/${sync.variant}`;
  for (const plan of plans)
    for (const { connection, syncs } of plan.targets)
      for (const sync of syncs.filter((s) => !s.onWebhook)) {
        const key = runKey(connection, sync);
        if (!runs.has(key)) runs.set(key, runSyncForChange(deps, connection, sync));
      }
  for (const run of runs.values()) run.catch(() => undefined);

  await Promise.all(
    claimed.map(async (c, i) => {
      const plan = plans[i];
      await tracer().startActiveSpan('weft.provider_delivery', async (span) => {
        span.setAttributes({ 'weft.provider': c.doc.provider, 'weft.integration': c.doc.provider_config_key, 'weft.provider_event': c.doc.event });
        try {
          const forwarded = await Promise.all(plan.targets.map(({ connection }) => forward(deps.outbox, c.doc, plan.payload, connection)));
          if (plan.lifecycle) {
            const lifecycle = plan.lifecycle;
            await Promise.all(plan.targets.map(({ connection }) => signalSubscriptionLifecycle(deps, connection, lifecycle)));
          }
          // A sync that acts on the delivery itself gets it, once per connection; the others were asked to run.
          const handle = deps.handleWithSync;
          await Promise.all(
            plan.targets.flatMap(({ connection, syncs }) =>
              syncs.map((s) =>
                s.onWebhook && handle
                  ? handleUnlessPaused(deps, handle, connection, s, { id: c.doc._id, event: c.doc.event, payload: plan.payload })
                  : runs.get(runKey(connection, s)),
              ),
            ),
          );
          const status = plan.targets.length ? 'processed' : 'unmatched';
          await deps.stores.providerDeliveries.finish(c, {
            status,
            route: plan.route,
            connection_ids: plan.targets.map((t) => t.connection.connection_id),
            forwarded: forwarded.filter((id): id is string => id !== null),
            syncs: plan.targets.flatMap(({ connection, syncs }) => syncs.map((s) => `${connection.connection_id}/${s.name}`)),
          });
          span.setAttribute('weft.outcome', status);
          recordDelivery(c.doc.provider, status);
        } catch (err) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
          recordDelivery(c.doc.provider, 'retried');
          deps.logger.warn({ err: (err as Error)?.message, delivery: c.doc._id }, 'provider delivery not processed; it is taken again after its claim');
        } finally {
          span.end();
        }
      });
    }),
  );
  return due.length;
}

/** A sync a delivery concerns; `onWebhook`: it acts on the delivery itself rather than run. */
type ConcernedSync = SyncSelector & { onWebhook: boolean };

/** A paused sync (its schedule paused by the app or an operator) takes no records from deliveries either. */
async function handleUnlessPaused(
  deps: DeliveryProcessingDeps,
  handle: SyncWebhookHandler,
  connection: ConnectionDoc,
  sync: SyncSelector,
  delivery: Parameters<SyncWebhookHandler>[2],
): Promise<void> {
  if (await schedulePaused(deps, connection, sync)) return;
  await handle(connection, sync.name, delivery);
}

interface DeliveryPlan {
  route: string | null;
  /** A notification about the subscription itself that asks for it to be renewed or made again. */
  lifecycle?: SubscriptionLifecycle;
  /** The body as JSON (what a `forward` event carries). */
  payload: unknown;
  targets: Array<{ connection: ConnectionDoc; syncs: ConcernedSync[] }>;
}

/** Who a delivery is about, and which of their syncs it concerns. */
async function planDelivery(deps: DeliveryProcessingDeps, doc: ProviderDeliveryDoc): Promise<DeliveryPlan> {
  const integration = deps.registry.get(doc.provider);
  const webhooks = integration?.provider.webhooks;
  const payload = parseBody(doc.body);
  const route = doc.route ?? (webhooks ? routeOf(webhooks, payload) : null);
  if (!route) return { route: null, payload, targets: [] };
  const store = deps.stores.providerDeliveries;
  const ids = await store.connectionsOf(doc.environment, doc.provider_config_key, route);
  // A connection re-authorized with other credentials (another installation) no longer holds
  // the route; a subscription's route is removed with it.
  const connections = (await deps.stores.connections.getManyById(ids)).filter(
    (c) =>
      c.environment === doc.environment &&
      c.provider_config_key === doc.provider_config_key &&
      (webhooks?.kind !== 'signed' || routesOfConnection(deps, webhooks, c).includes(route)),
  );
  const gone = ids.filter((id) => !connections.some((c) => c._id === id));
  if (gone.length) await store.removeRoutes(doc.environment, doc.provider_config_key, route, gone);
  const syncs = (integration?.syncs ?? [])
    .filter((s) => s.webhookSubscriptions?.includes(doc.event))
    .map((s) => ({ name: s.name, variant: BASE_VARIANT, onWebhook: Boolean(s.onWebhook && deps.handleWithSync) }));
  const targets = connections.map((connection) => ({ connection, syncs }));
  if (webhooks?.kind === 'subscription-notifications' && route.startsWith('subscription:')) {
    const subscriptionId = route.slice(route.indexOf(':') + 1);
    if (webhooks.renewOn.includes(doc.event)) return { route, payload, targets, lifecycle: { subscriptionId, action: 'renew' } };
    if (webhooks.remakeOn.includes(doc.event)) return { route, payload, targets, lifecycle: { subscriptionId, action: 'remake' } };
  }
  return { route, payload, targets };
}

/** The route key a delivery's body names (`installation:42`, `subscription:<id>`), or null. */
function routeOf(webhooks: ProviderWebhooks, body: unknown): string | null {
  if (webhooks.kind === 'secret-path') return null; // its route comes from the URL, set at intake
  const { kind, bodyPath } = webhooks.kind === 'signed' ? webhooks.attribution : { kind: 'subscription', bodyPath: webhooks.subscriptionIdField };
  let value: unknown = body;
  for (const part of bodyPath.split('.')) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return `${kind}:${value}`;
  if (typeof value === 'string' && value.length > 0 && value.length <= 200) return `${kind}:${value}`;
  return null;
}

function routesOfConnection(deps: Pick<DeliveryProcessingDeps, 'outbox'>, webhooks: ProviderWebhooks | undefined, connection: ConnectionDoc): string[] {
  return routesOfCredentials(webhooks, deps.outbox.cipher.open<object>(connection.credentials_encrypted, sealedAt.connectionCredentials(connection)));
}

/**
 * Records the routes a stored connection's credentials give, so deliveries naming them find
 * it. Routes are only ever added: a re-authorized connection's old ones are dropped by the
 * first delivery that names them (its credentials no longer hold them).
 */
export async function addConnectionRoutes(deps: Pick<ControlDeps, 'registry' | 'stores'>, connection: ConnectionDoc, credentials: object): Promise<void> {
  const routes = routesOfCredentials(deps.registry.get(connection.provider)?.provider.webhooks, credentials);
  await deps.stores.providerDeliveries.addRoutes(connection.environment, connection.provider_config_key, routes, connection._id);
}

/**
 * Once per database: the routes of connections stored before Weft took in provider webhooks
 * (each connection's credentials opened once), so their deliveries are attributed too.
 * Resolves with the number of connections that got routes.
 */
export async function recordRoutesOfEarlierConnections(deps: Pick<DeliveryProcessingDeps, 'registry' | 'stores' | 'outbox'>): Promise<number> {
  let recorded = 0;
  await runOnce(deps.stores.db, 'provider_webhook_routes', async () => {
    for (const integration of await deps.stores.integrations.all()) {
      const webhooks = deps.registry.get(integration.provider)?.provider.webhooks;
      if (!webhooks) continue;
      for (let after: string | null = null; ;) {
        const page: { connections: ConnectionDoc[]; next: string | null } = await deps.stores.connections.pageForIntegration(
          integration.environment,
          integration.unique_key,
          { after, limit: 200 },
        );
        for (const connection of page.connections) {
          const routes = routesOfConnection(deps, webhooks, connection);
          await deps.stores.providerDeliveries.addRoutes(connection.environment, connection.provider_config_key, routes, connection._id);
          if (routes.length) recorded++;
        }
        if (!page.next) break;
        after = page.next;
      }
    }
  });
  return recorded;
}

/** The route keys a connection's credentials give (an App connection: its installation). */
function routesOfCredentials(webhooks: ProviderWebhooks | undefined, credentials: object): string[] {
  if (webhooks?.kind !== 'signed') return [];
  const value = (credentials as Record<string, unknown>)[webhooks.attribution.credentialField];
  return typeof value === 'string' || typeof value === 'number' ? [`${webhooks.attribution.kind}:${value}`] : [];
}

function parseBody(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    // The intake takes JSON only; a delivery stored before it checked is forwarded as text.
    return body;
  }
}

/** Sends the delivery to the app as a `forward` event about one connection; its id derives from both, so doing it twice queues it once. */
async function forward(outbox: OutboxDeps, doc: ProviderDeliveryDoc, payload: unknown, connection: ConnectionDoc): Promise<string | null> {
  const id = `fwd_${createHash('sha256').update(`${doc._id}\n${connection._id}`).digest('base64url').slice(0, 32)}`;
  const queued = await queueWebhook(outbox, {
    id,
    environment: doc.environment,
    type: 'forward',
    gate: null,
    urlOverride: connection.webhook_url_override ?? null,
    connection: { providerConfigKey: connection.provider_config_key, connectionId: connection.connection_id },
    // Nango's forward shape: apps written for it read these fields.
    payload: { from: doc.provider, type: 'forward', connectionId: connection.connection_id, providerConfigKey: connection.provider_config_key, payload },
  });
  return queued.id;
}

const tracer = () => trace.getTracer('weft.provider-webhooks');

const instruments = lazyInstruments('weft.provider-webhooks', (meter) => ({
  deliveries: meter.createCounter('weft.provider_webhook.deliveries', {
    description: 'Provider webhook deliveries processed, by provider and outcome (processed, unmatched, retried: taken again later)',
  }),
}));

function recordDelivery(provider: string, outcome: 'processed' | 'unmatched' | 'retried'): void {
  instruments().deliveries.add(1, { 'weft.provider': provider, 'weft.outcome': outcome });
}
