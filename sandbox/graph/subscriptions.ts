/**
 * Change notifications on drives, as Microsoft Graph sends them for OneDrive and SharePoint
 * (`/subscriptions` on `/v1.0` and `/beta`):
 *
 *   POST   /subscriptions        { changeType: "updated", notificationUrl, lifecycleNotificationUrl?,
 *                                  resource: "/me/drive/root" | "drives/{id}/root" | "users/{id}/drive/root",
 *                                  expirationDateTime (at most 42300 minutes ahead for a driveItem),
 *                                  clientState? (at most 128 characters), latestSupportedTlsVersion? }
 *          Graph first validates the notificationUrl (and the lifecycleNotificationUrl): a POST to
 *          `<url>?validationToken=<token>` (`Content-Type: text/plain; charset=utf-8`, empty body)
 *          that must answer 200, `text/plain`, the token itself as the body, within 10 s;
 *          otherwise 400 ValidationError and no subscription. Then 201 with the subscription.
 *   GET    /subscriptions        { value: [...] } the live (unexpired) subscriptions
 *   GET    /subscriptions/{id}   404 once deleted, removed or expired
 *   PATCH  /subscriptions/{id}   { expirationDateTime } renews (a new notificationUrl is validated first)
 *   POST   /subscriptions/{id}/reauthorize   204: answers a reauthorizationRequired challenge
 *   DELETE /subscriptions/{id}   204
 *
 * When a drive changes (the control methods or writes through the API), each live
 * subscription on it gets one change notification per batch of changes, POSTed to its
 * notificationUrl in the background with plain fetch: `{ value: [{ subscriptionId,
 * subscriptionExpirationDateTime, changeType: "updated", resource, clientState, tenantId }] }`.
 * OneDrive notifications carry no item data: the app calls delta. Graph's HTTP client waits 3 s;
 * a failure is recorded, not retried (Graph retries for a while; the simulator leaves that to
 * the test). Lifecycle notifications (`sendLifecycle`) go to the lifecycleNotificationUrl.
 *
 * Errors documented by Microsoft or seen in its answers: ValidationError "Subscription validation
 * request failed. Notification endpoint must respond with 200 OK to validation request." (and
 * "… Response must exactly match validationToken query parameter." for a wrong body),
 * ExtensionError "Subscription expiration can only be 42300 minutes in the future.", InvalidRequest
 * "Could not process subscription creation payload. …". The other messages (a past expiration,
 * a long clientState, another changeType, an unknown resource) are the simulator's own wording.
 * Plain http notification URLs are accepted (Graph requires https) so tests can listen on 127.0.0.1.
 */
import { Rng } from '../shared/prng';
import { postOnce, WebhookSender, WebhookSource } from '../shared/webhook-sender';
import { personUpn, type Tenant } from './data';
import { GraphError } from './errors';
import type { Reply } from './routes';
import type { DriveStore } from './store';

/** A driveItem subscription lives at most this long (Graph: 42300 minutes, under 30 days). */
const DRIVE_SUBSCRIPTION_MAX_MINUTES = 42_300;
const VALIDATION_TIMEOUT_MS = 10_000;
/** Graph publishes notifications with an HTTP client that waits 3 seconds. */
const NOTIFICATION_TIMEOUT_MS = 3_000;
const CLIENT_STATE_MAX = 128;
const TLS_VERSIONS = new Set(['v1_0', 'v1_1', 'v1_2', 'v1_3']);
const PAYLOAD_ERROR =
  'Could not process subscription creation payload. Are all property names spelled and camelCased properly? Also are the dateTimeOffest properties in the following format: yyyy-MM-ddThh:mm:ss.fffffffZ';
const VALIDATION_NO_200 = 'Subscription validation request failed. Notification endpoint must respond with 200 OK to validation request.';
const VALIDATION_MISMATCH = 'Subscription validation request failed. Response must exactly match validationToken query parameter.';

export type LifecycleEvent = 'reauthorizationRequired' | 'subscriptionRemoved' | 'missed';

/** A subscription as `GET /subscriptions/{id}` shows it (without `@odata.context`). */
export interface GraphSubscription {
  id: string;
  resource: string;
  applicationId: string;
  changeType: string;
  clientState: string | null;
  notificationUrl: string;
  notificationQueryOptions: null;
  lifecycleNotificationUrl: string | null;
  expirationDateTime: string;
  creatorId: string;
  includeResourceData: boolean;
  latestSupportedTlsVersion: string;
  encryptionCertificate: null;
  encryptionCertificateId: null;
  notificationUrlAppId: null;
}

interface SubscriptionRec {
  id: string;
  resource: string;
  store: DriveStore;
  clientState: string | null;
  notificationUrl: string;
  lifecycleNotificationUrl: string | null;
  expirationMs: number;
  tls: string;
  /** Set by a reauthorizationRequired lifecycle notification; a renewal or `/reauthorize` clears it. */
  reauthorizationRequired: boolean;
}

export interface SubscriptionRequest {
  method: string;
  /** Path after the version, e.g. `/subscriptions/{id}`. */
  path: string;
  body: Buffer;
  base: string;
  version: 'v1.0' | 'beta';
  now: number;
  requestId: string;
}

/** `2026-06-01T12:00:00.0000000Z`: Graph's seven-digit DateTimeOffset. */
function graphTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$10000Z');
}

export class GraphSubscriptions extends WebhookSource {
  private readonly subs = new Map<string, SubscriptionRec>();
  private readonly seen = new Map<DriveStore, number>();
  protected readonly sender: WebhookSender;
  private counter = 0;
  private notificationCounter = 0;
  readonly tenantId: string;
  readonly applicationId: string;

  constructor(
    private readonly deps: {
      seedK: number;
      tenant: Tenant;
      drives: readonly DriveStore[];
      driveById: ReadonlyMap<string, DriveStore>;
      clock: () => number;
    },
  ) {
    super();
    this.sender = new WebhookSender({ timeoutMs: NOTIFICATION_TIMEOUT_MS, clock: deps.clock });
    this.tenantId = Rng.from(deps.seedK, 'tenant-id').uuid();
    this.applicationId = Rng.from(deps.seedK, 'application-id').uuid();
    for (const d of deps.drives) this.seen.set(d, d.seq);
  }

  isSubscriptionPath(path: string): boolean {
    return /^\/subscriptions(\/|$)/i.test(path);
  }

  // ---- API -----------------------------------------------------------------------------

  async handle(req: SubscriptionRequest): Promise<Reply> {
    const m = /^\/subscriptions(?:\/([^/]+))?(\/reauthorize)?\/?$/i.exec(req.path);
    if (!m) throw new GraphError(400, 'BadRequest', `Resource not found for the segment '${req.path.split('/')[2] ?? ''}'.`);
    const id = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
    const ctx = (fragment: string) => `${req.base}/${req.version}/$metadata#${fragment}`;
    const notAllowed = (allow: string) => new GraphError(405, 'BadRequest', 'Specified HTTP method is not allowed for the request target.', { allow });
    if (m[2]) {
      if (req.method !== 'POST') throw notAllowed('POST');
      const rec = this.live(id!, req.now);
      rec.reauthorizationRequired = false;
      return { status: 204 };
    }
    if (id === undefined) {
      if (req.method === 'GET') {
        return { status: 200, body: { '@odata.context': ctx('subscriptions'), value: this.liveList(req.now).map((s) => this.json(s)) } };
      }
      if (req.method === 'POST') {
        const rec = await this.create(req);
        return { status: 201, body: { '@odata.context': ctx('subscriptions/$entity'), ...this.json(rec) } };
      }
      throw notAllowed('GET, POST');
    }
    switch (req.method) {
      case 'GET':
        return { status: 200, body: { '@odata.context': ctx('subscriptions/$entity'), ...this.json(this.live(id, req.now)) } };
      case 'PATCH': {
        const rec = await this.update(this.live(id, req.now), req);
        return { status: 200, body: { '@odata.context': ctx('subscriptions/$entity'), ...this.json(rec) } };
      }
      case 'DELETE':
        this.live(id, req.now);
        this.subs.delete(id);
        return { status: 204 };
      default:
        throw notAllowed('GET, PATCH, DELETE');
    }
  }

  private live(id: string, now: number): SubscriptionRec {
    const rec = this.subs.get(id);
    if (!rec || rec.expirationMs <= now) {
      if (rec) this.subs.delete(id);
      throw new GraphError(404, 'ResourceNotFound', `The object was not found.`);
    }
    return rec;
  }

  private liveList(now: number): SubscriptionRec[] {
    return [...this.subs.values()].filter((s) => s.expirationMs > now);
  }

  private parseBody(body: Buffer): Record<string, unknown> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8') || 'null');
    } catch {
      throw new GraphError(400, 'InvalidRequest', PAYLOAD_ERROR);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new GraphError(400, 'InvalidRequest', PAYLOAD_ERROR);
    return parsed as Record<string, unknown>;
  }

  private expiration(value: unknown, now: number, required: boolean): number | undefined {
    if (value === undefined && !required) return undefined;
    if (value === undefined || value === null)
      throw new GraphError(400, 'InvalidRequest', 'expirationDateTime is a required property for subscription creation.');
    const ms = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value) ? Date.parse(value) : NaN;
    if (!Number.isFinite(ms)) throw new GraphError(400, 'InvalidRequest', PAYLOAD_ERROR);
    if (ms <= now) throw new GraphError(400, 'ExtensionError', 'Subscription expiration time must be in the future.');
    if (ms - now > DRIVE_SUBSCRIPTION_MAX_MINUTES * 60_000) {
      throw new GraphError(400, 'ExtensionError', `Subscription expiration can only be ${DRIVE_SUBSCRIPTION_MAX_MINUTES} minutes in the future.`);
    }
    return ms;
  }

  private url(value: unknown, name: string): string {
    let u: URL | null = null;
    try {
      u = typeof value === 'string' ? new URL(value) : null;
    } catch {
      u = null;
    }
    if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:'))
      throw new GraphError(400, 'InvalidRequest', `Invalid ${name}: an absolute https URL is required.`);
    return value as string;
  }

  /** The drive a `resource` names: the signed-in user's (`me`, `users/{id|upn}`) or one by id. */
  private driveOf(resource: unknown): DriveStore {
    if (typeof resource !== 'string' || resource.trim() === '') throw new GraphError(400, 'InvalidRequest', PAYLOAD_ERROR);
    const path = resource.replace(/^\/+/, '').replace(/\/+$/, '');
    const me = this.deps.tenant.people[0];
    let m: RegExpExecArray | null;
    if (/^(me\/)?drive\/root$/i.test(path)) return this.deps.drives[0];
    if ((m = /^users\/([^/]+)\/drive\/root$/i.exec(path))) {
      const who = decodeURIComponent(m[1]).toLowerCase();
      if (who === me.id.toLowerCase() || who === personUpn(this.deps.tenant, me).toLowerCase()) return this.deps.drives[0];
      throw new GraphError(404, 'itemNotFound', 'The resource could not be found.');
    }
    if ((m = /^drives\/([^/]+)\/root$/i.exec(path))) {
      const store = this.deps.driveById.get(decodeURIComponent(m[1]));
      if (store) return store;
      throw new GraphError(404, 'itemNotFound', 'The resource could not be found.');
    }
    throw new GraphError(
      400,
      'InvalidRequest',
      `Resource '${resource}' is not supported: subscribe to the root of a drive (/me/drive/root, drives/{drive-id}/root).`,
    );
  }

  private async create(req: SubscriptionRequest): Promise<SubscriptionRec> {
    const b = this.parseBody(req.body);
    if (b.changeType === undefined || b.notificationUrl === undefined || b.resource === undefined) throw new GraphError(400, 'InvalidRequest', PAYLOAD_ERROR);
    if (b.changeType !== 'updated') throw new GraphError(400, 'InvalidRequest', "A subscription on a driveItem supports only the changeType 'updated'.");
    const notificationUrl = this.url(b.notificationUrl, 'notificationUrl');
    const lifecycleNotificationUrl = b.lifecycleNotificationUrl == null ? null : this.url(b.lifecycleNotificationUrl, 'lifecycleNotificationUrl');
    const store = this.driveOf(b.resource);
    const expirationMs = this.expiration(b.expirationDateTime, req.now, true)!;
    if (b.clientState != null && (typeof b.clientState !== 'string' || b.clientState.length > CLIENT_STATE_MAX)) {
      throw new GraphError(400, 'InvalidRequest', `clientState must be a string of at most ${CLIENT_STATE_MAX} characters.`);
    }
    if (b.latestSupportedTlsVersion != null && !TLS_VERSIONS.has(String(b.latestSupportedTlsVersion)))
      throw new GraphError(400, 'InvalidRequest', PAYLOAD_ERROR);
    if (b.includeResourceData === true) throw new GraphError(400, 'InvalidRequest', 'includeResourceData is not supported for driveItem subscriptions.');
    await this.validate(notificationUrl, req.requestId);
    if (lifecycleNotificationUrl !== null) await this.validate(lifecycleNotificationUrl, req.requestId);
    const rec: SubscriptionRec = {
      id: Rng.from(this.deps.seedK, 'subscription', this.counter++).uuid(),
      resource: b.resource as string,
      store,
      clientState: (b.clientState as string | null | undefined) ?? null,
      notificationUrl,
      lifecycleNotificationUrl,
      expirationMs,
      tls: (b.latestSupportedTlsVersion as string | undefined) ?? 'v1_2',
      reauthorizationRequired: false,
    };
    this.subs.set(rec.id, rec);
    return rec;
  }

  /** Renewal: a new expirationDateTime (and optionally a new, validated notificationUrl). */
  private async update(rec: SubscriptionRec, req: SubscriptionRequest): Promise<SubscriptionRec> {
    const b = this.parseBody(req.body);
    const allowed = new Set(['expirationDateTime', 'notificationUrl', '@odata.type']);
    if (Object.keys(b).some((k) => !allowed.has(k))) throw new GraphError(400, 'InvalidRequest', PAYLOAD_ERROR);
    const expirationMs = this.expiration(b.expirationDateTime, req.now, false);
    const notificationUrl = b.notificationUrl === undefined ? undefined : this.url(b.notificationUrl, 'notificationUrl');
    if (notificationUrl !== undefined && notificationUrl !== rec.notificationUrl) await this.validate(notificationUrl, req.requestId);
    // The subscription may have been deleted while the validation ran.
    const current = this.live(rec.id, req.now);
    if (expirationMs !== undefined) current.expirationMs = expirationMs;
    if (notificationUrl !== undefined) current.notificationUrl = notificationUrl;
    current.reauthorizationRequired = false;
    return current;
  }

  /** Graph's validation handshake: 200, text/plain, the token itself, within 10 s. */
  private async validate(url: string, requestId: string): Promise<void> {
    const token = `Validation: Testing client application reachability for subscription Request-Id: ${requestId}`;
    const target = new URL(url);
    target.searchParams.set('validationToken', token);
    const r = await postOnce(target.toString(), { 'content-type': 'text/plain; charset=utf-8' }, '', VALIDATION_TIMEOUT_MS);
    if (r.statusCode !== 200) throw new GraphError(400, 'ValidationError', VALIDATION_NO_200);
    const plain = (r.contentType ?? '').split(';')[0].trim().toLowerCase() === 'text/plain';
    if (!plain || r.responseBody !== token) throw new GraphError(400, 'ValidationError', VALIDATION_MISMATCH);
  }

  private json(s: SubscriptionRec): GraphSubscription {
    return {
      id: s.id,
      resource: s.resource,
      applicationId: this.applicationId,
      changeType: 'updated',
      clientState: s.clientState,
      notificationUrl: s.notificationUrl,
      notificationQueryOptions: null,
      lifecycleNotificationUrl: s.lifecycleNotificationUrl,
      expirationDateTime: graphTime(s.expirationMs),
      creatorId: this.deps.tenant.people[0].id,
      includeResourceData: false,
      latestSupportedTlsVersion: s.tls,
      encryptionCertificate: null,
      encryptionCertificateId: null,
      notificationUrlAppId: null,
    };
  }

  // ---- notifications -------------------------------------------------------------------

  /**
   * Called after every request and control method: a drive whose change sequence moved since
   * the last call gets one change notification per live subscription (a batch of changes, one
   * notification, as Graph coalesces them loosely).
   */
  notifyChangedDrives(): void {
    const now = this.deps.clock();
    for (const store of this.deps.drives) {
      const last = this.seen.get(store) ?? 0;
      if (store.seq === last) continue;
      this.seen.set(store, store.seq);
      for (const s of this.liveList(now)) {
        if (s.store !== store) continue;
        this.post(s, 'change', null, s.notificationUrl, {
          subscriptionId: s.id,
          subscriptionExpirationDateTime: graphTime(s.expirationMs),
          changeType: 'updated',
          resource: s.resource,
          clientState: s.clientState,
          tenantId: this.tenantId,
        });
      }
    }
  }

  /** A lifecycle notification to the subscription's lifecycleNotificationUrl; `subscriptionRemoved` also removes it. */
  sendLifecycle(id: string, event: LifecycleEvent): void {
    if (event !== 'reauthorizationRequired' && event !== 'subscriptionRemoved' && event !== 'missed')
      throw new Error(`sendLifecycleNotification: unknown event ${String(event)}`);
    const s = this.subs.get(id);
    if (!s || s.expirationMs <= this.deps.clock()) throw new Error(`sendLifecycleNotification: no live subscription ${id}`);
    if (s.lifecycleNotificationUrl === null) throw new Error(`sendLifecycleNotification: subscription ${id} has no lifecycleNotificationUrl`);
    this.post(s, 'lifecycle', event, s.lifecycleNotificationUrl, {
      subscriptionId: s.id,
      subscriptionExpirationDateTime: graphTime(s.expirationMs),
      tenantId: this.tenantId,
      clientState: s.clientState,
      lifecycleEvent: event,
    });
    if (event === 'reauthorizationRequired') s.reauthorizationRequired = true;
    if (event === 'subscriptionRemoved') this.subs.delete(id);
  }

  private post(s: SubscriptionRec, event: string, action: string | null, url: string, notification: Record<string, unknown>): void {
    this.sender.enqueue({
      id: Rng.from(this.deps.seedK, 'notification', this.notificationCounter++).uuid(),
      lane: s.id,
      url,
      event,
      action,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ value: [notification] }),
    });
  }

  // ---- inspection ----------------------------------------------------------------------

  list(): Array<GraphSubscription & { reauthorizationRequired: boolean }> {
    return this.liveList(this.deps.clock()).map((s) => ({ ...this.json(s), reauthorizationRequired: s.reauthorizationRequired }));
  }
}
