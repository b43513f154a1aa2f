import { randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { insertManyIgnoringDuplicates, isDuplicateKey } from './duplicate-key';
import { keyId, keyPrefixRange } from './key-ids';
import { timeKey } from './key-range';
import { ensureExpiry, type ExpiryRule } from './ttl';

/** What became of a stored delivery. */
export type ProviderDeliveryStatus = 'pending' | 'processed' | 'unmatched';

/**
 * Webhook deliveries from the providers, stored as they came once their signature is
 * verified, before they are answered: everything done with one starts from this copy, so a
 * process that dies after the answer loses nothing. Read and written by `_id` only.
 */
export interface ProviderDeliveryDoc {
  /** providerDeliveryId(environment, integration, delivery): a redelivery has the same. */
  _id: string;
  environment: string;
  /** The integration's unique key. */
  provider_config_key: string;
  provider: string;
  /** The provider's id of the delivery (GitHub: `X-GitHub-Delivery`). */
  delivery_id: string;
  /** The provider's event (GitHub: `X-GitHub-Event`). */
  event: string;
  /** The raw body, as signed. */
  body: string;
  received_at: Date;
  /** Absent on deliveries stored before processing existed: pending. */
  status?: ProviderDeliveryStatus;
  /** The route key the delivery named (GitHub: `installation:<id>`), when it named one; set at intake when its URL named it (secret-path). */
  route?: string | null;
  /** The connections it was attributed to (their `connection_id`). */
  connection_ids?: string[];
  /** The `forward` webhook events it was sent to the app as. */
  forwarded?: string[];
  /** The syncs it asked to run (`<connection_id>/<sync>`). */
  syncs?: string[];
  processed_at?: Date;
}

export type NewProviderDelivery = Omit<ProviderDeliveryDoc, '_id' | 'status' | 'connection_ids' | 'forwarded' | 'syncs' | 'processed_at'>;

/** A due delivery as the queue holds it: claim it by this key. */
export interface QueuedDelivery {
  id: string;
  key: string;
}

/** A claimed delivery: the lease key ends the claim (`finish`), or, left, makes it due again after the lease. */
export interface ClaimedDelivery {
  doc: ProviderDeliveryDoc;
  lease: string;
}

/** How long a delivery is kept. */
const PROVIDER_DELIVERY_TTL_SECONDS = 7 * 86_400;
const QUEUE_PREFIX = '#due|';

export function providerDeliveryId(environment: string, providerConfigKey: string, deliveryId: string): string {
  return [environment, providerConfigKey, deliveryId].map(encodeURIComponent).join(':');
}

/** `#due|<time>|<claimer>|<id>`: a claim's key names its claimer, so two claims made in one millisecond never share a key. */
function queueKey(at: Date | number, id: string, claimer = '0'): string {
  return `${QUEUE_PREFIX}${timeKey(at)}|${claimer}|${id}`;
}

function idOfQueueKey(key: string): string {
  // The id holds no "|" (providerDeliveryId encodes its parts).
  return key.slice(key.lastIndexOf('|') + 1);
}

/**
 * `provider_deliveries` (the deliveries), `provider_delivery_keys` (the processing queue and
 * the listing by integration and outcome, `_id` keys only, as webhook_event_keys) and
 * `provider_webhook_routes` (which connections a route key — an installation, a
 * subscription — belongs to). Every read is by `_id` or an `_id` range.
 */
/**
 * A subscription a connection holds at its provider (Graph change notifications). Its secret
 * (Graph's `clientState`) is kept as a SHA-256 hash only: the intake compares hashes, and
 * nothing ever needs the secret back.
 */
export interface ProviderSubscriptionDoc {
  /** keyId(environment, integration, subscription id): what the intake looks a notification's subscription up by. */
  _id: string;
  environment: string;
  provider_config_key: string;
  /** The connection's `_id`. */
  connection: string;
  subscription_id: string;
  /** What it watches (Graph: `/drives/<id>/root`). */
  resource: string;
  client_state_sha256: string;
  expires_at: Date;
  created_at: Date;
}

/** A connection's subscriptions are listed through `#c|<connection>|<subscription id>` keys in the same collection. */
const subscriptionIndexKey = (connection: string, subscriptionId: string) => keyId('#c', connection, subscriptionId);
/** A secret-path subscription is found by its secret's hash: `#s|<environment>|<integration>|<sha256>`. */
const secretIndexKey = (environment: string, providerConfigKey: string, secretSha256: string) => keyId('#s', environment, providerConfigKey, secretSha256);

export class ProviderDeliveryStore {
  private readonly col: Collection<ProviderDeliveryDoc>;
  private readonly keys: Collection<{ _id: string; at?: Date }>;
  private readonly routes: Collection<{ _id: string; connection: string; at: Date }>;
  private readonly subscriptions: Collection<ProviderSubscriptionDoc | { _id: string; target: string }>;
  constructor(db: Db) {
    this.col = db.collection<ProviderDeliveryDoc>('provider_deliveries');
    this.keys = db.collection('provider_delivery_keys');
    this.routes = db.collection('provider_webhook_routes');
    this.subscriptions = db.collection('provider_subscriptions');
  }

  /** Records a subscription made for a connection, and routes its notifications to it. */
  async saveSubscription(doc: Omit<ProviderSubscriptionDoc, '_id'>): Promise<void> {
    const _id = keyId(doc.environment, doc.provider_config_key, doc.subscription_id);
    await insertManyIgnoringDuplicates(this.subscriptions, [
      { _id: subscriptionIndexKey(doc.connection, doc.subscription_id), target: _id },
      { _id: secretIndexKey(doc.environment, doc.provider_config_key, doc.client_state_sha256), target: _id },
    ]);
    await this.subscriptions.replaceOne({ _id }, { _id, ...doc }, { upsert: true });
    await this.addRoutes(doc.environment, doc.provider_config_key, [`subscription:${doc.subscription_id}`], doc.connection);
  }

  async getSubscription(environment: string, providerConfigKey: string, subscriptionId: string): Promise<ProviderSubscriptionDoc | null> {
    return (await this.subscriptions.findOne({ _id: keyId(environment, providerConfigKey, subscriptionId) })) as ProviderSubscriptionDoc | null;
  }

  /** The subscription whose secret hashes to this (a secret-path delivery's last segment). */
  async subscriptionBySecret(environment: string, providerConfigKey: string, secretSha256: string): Promise<ProviderSubscriptionDoc | null> {
    const index = (await this.subscriptions.findOne({ _id: secretIndexKey(environment, providerConfigKey, secretSha256) })) as { target: string } | null;
    if (!index) return null;
    const doc = (await this.subscriptions.findOne({ _id: index.target })) as ProviderSubscriptionDoc | null;
    // A subscription made again under the same id with another secret leaves the old index behind.
    return doc?.client_state_sha256 === secretSha256 ? doc : null;
  }

  /** A connection's subscriptions (its `_id`). */
  async subscriptionsOf(connection: string): Promise<ProviderSubscriptionDoc[]> {
    const index = (await this.subscriptions.find({ _id: keyPrefixRange('#c', connection) }).toArray()) as Array<{ _id: string; target: string }>;
    if (index.length === 0) return [];
    const docs = (await this.subscriptions.find({ _id: { $in: index.map((i) => i.target) } }).toArray()) as ProviderSubscriptionDoc[];
    return docs.filter((d) => d.connection === connection);
  }

  async renewSubscription(doc: ProviderSubscriptionDoc, expiresAt: Date): Promise<void> {
    await this.subscriptions.updateOne({ _id: doc._id }, { $set: { expires_at: expiresAt } });
  }

  /** Forgets a subscription (deleted or removed at the provider): its notifications reach no connection any more. */
  async removeSubscription(doc: ProviderSubscriptionDoc): Promise<void> {
    await this.removeRoutes(doc.environment, doc.provider_config_key, `subscription:${doc.subscription_id}`, [doc.connection]);
    await this.subscriptions.deleteMany({
      _id: {
        $in: [
          doc._id,
          subscriptionIndexKey(doc.connection, doc.subscription_id),
          secretIndexKey(doc.environment, doc.provider_config_key, doc.client_state_sha256),
        ],
      },
    });
  }

  async ensureIndexes(): Promise<ExpiryRule[]> {
    return [
      await ensureExpiry(this.col, 'received_at', PROVIDER_DELIVERY_TTL_SECONDS),
      // Listing keys carry `at`; queue keys do not (they leave when their delivery is processed).
      await ensureExpiry(this.keys, 'at', PROVIDER_DELIVERY_TTL_SECONDS),
    ];
  }

  /**
   * Stores a delivery, queued for processing; `false` when one with its id is stored already
   * (a redelivery), which changes nothing. The queue key is written first: a stored delivery
   * is always queued, even if the process dies between the two writes.
   */
  async add(doc: NewProviderDelivery): Promise<boolean> {
    const _id = providerDeliveryId(doc.environment, doc.provider_config_key, doc.delivery_id);
    const key = queueKey(doc.received_at, _id);
    // Only a key this call wrote is removed again: a redelivery in the same millisecond shares the first one's.
    const queued = await this.keys.insertOne({ _id: key }).then(
      () => true,
      (err: unknown) => {
        if (isDuplicateKey(err)) return false;
        throw err;
      },
    );
    try {
      await this.col.insertOne({ _id, ...doc, status: 'pending' });
      return true;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      if (queued) await this.keys.deleteOne({ _id: key });
      return false;
    }
  }

  async get(id: string): Promise<ProviderDeliveryDoc | null> {
    return this.col.findOne({ _id: id });
  }

  /** Deliveries due for processing at `now`, oldest first (claims end up later in the queue). */
  async due(now: Date, limit: number): Promise<QueuedDelivery[]> {
    const entries = await this.keys
      .find({ _id: { $gte: QUEUE_PREFIX, $lt: `${QUEUE_PREFIX}${timeKey(now)}}` } })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return entries.map((e) => ({ id: idOfQueueKey(e._id), key: e._id }));
  }

  /**
   * Takes a due delivery for `leaseMs`: its queue key moves to the lease's end (new key
   * first). Of two processes claiming one key exactly one deletes it and wins; a process that
   * dies holding a claim leaves the key, due again when the lease ends. Null: another
   * process won, or the delivery is gone or done (its key is then removed).
   */
  async claim(entry: QueuedDelivery, now: Date, leaseMs: number): Promise<ClaimedDelivery | null> {
    const doc = await this.col.findOne({ _id: entry.id });
    if (!doc || (doc.status ?? 'pending') !== 'pending') {
      await this.keys.deleteOne({ _id: entry.key });
      return null;
    }
    const lease = queueKey(now.getTime() + leaseMs, entry.id, randomBytes(6).toString('base64url'));
    await this.keys.insertOne({ _id: lease });
    const { deletedCount } = await this.keys.deleteOne({ _id: entry.key });
    if (deletedCount === 1) return { doc, lease };
    await this.keys.deleteOne({ _id: lease });
    return null;
  }

  /** Records what became of a claimed delivery, lists it under its outcome, and ends the claim. */
  async finish(
    claimed: ClaimedDelivery,
    outcome: Required<Pick<ProviderDeliveryDoc, 'route' | 'connection_ids' | 'forwarded' | 'syncs'>> & { status: Exclude<ProviderDeliveryStatus, 'pending'> },
    now = new Date(),
  ): Promise<void> {
    const { doc } = claimed;
    await insertManyIgnoringDuplicates(this.keys, [
      { _id: `${keyId(doc.environment, doc.provider_config_key, outcome.status)}|${timeKey(doc.received_at)}|${doc._id}`, at: doc.received_at },
    ]);
    await this.col.updateOne({ _id: doc._id }, { $set: { ...outcome, processed_at: now } });
    await this.keys.deleteOne({ _id: claimed.lease });
  }

  /** An integration's deliveries with this outcome, newest first, received after `since`. */
  async list(
    environment: string,
    providerConfigKey: string,
    status: Exclude<ProviderDeliveryStatus, 'pending'>,
    limit: number,
    since: Date,
  ): Promise<ProviderDeliveryDoc[]> {
    const prefix = `${keyId(environment, providerConfigKey, status)}|`;
    const entries = await this.keys
      .find({ _id: { $gte: `${prefix}${timeKey(since)}`, $lt: `${prefix.slice(0, -1)}}` } })
      .sort({ _id: -1 })
      .limit(limit)
      .toArray();
    if (entries.length === 0) return [];
    const ids = entries.map((e) => e._id.slice(e._id.lastIndexOf('|') + 1));
    const docs = new Map((await this.col.find({ _id: { $in: ids } }).toArray()).map((d) => [d._id, d]));
    return ids.map((id) => docs.get(id)).filter((d): d is ProviderDeliveryDoc => d !== undefined);
  }

  /** Says that deliveries naming `route` in this integration are about `connection` (its `_id`). */
  async addRoutes(environment: string, providerConfigKey: string, routes: readonly string[], connection: string, now = new Date()): Promise<void> {
    if (routes.length === 0) return;
    await insertManyIgnoringDuplicates(
      this.routes,
      routes.map((route) => ({ _id: keyId(environment, providerConfigKey, route, connection), connection, at: now })),
    );
  }

  /** The connections (`_id`s) a route key belongs to in this integration. */
  async connectionsOf(environment: string, providerConfigKey: string, route: string): Promise<string[]> {
    const docs = await this.routes.find({ _id: keyPrefixRange(environment, providerConfigKey, route) }).toArray();
    return docs.map((d) => d.connection);
  }

  /** Forgets routes to connections that are gone (found so by a reader). */
  async removeRoutes(environment: string, providerConfigKey: string, route: string, connections: readonly string[]): Promise<void> {
    if (connections.length === 0) return;
    await this.routes.deleteMany({ _id: { $in: connections.map((c) => keyId(environment, providerConfigKey, route, c)) } });
  }
}
