/**
 * A deterministic local simulator of the Microsoft Graph files API (OneDrive / SharePoint
 * drives), answering like the real service as described in
 * Routes: see routes.ts; both `/v1.0` and `/beta`.
 *
 * Request pipeline (in this order):
 *   1. `/_download/...` (pre-authenticated download URLs): no Authorization; an invalid or
 *      expired `tempauth` → 401; then failNext() injections; then the bytes (Range → 206).
 *      `/_upload/...` (upload session URLs, also pre-authenticated): an Authorization header
 *      → 401 (Graph's docs warn that sending one fails); unknown or expired session → 404;
 *      PUT a fragment (202 with nextExpectedRanges; the last one 201/200 with the item),
 *      GET its status, DELETE cancels (204).
 *   2. Anything not under `/v1.0` or `/beta` → 400 BadRequest "Invalid version".
 *   3. Missing / unknown / revoked bearer token → 401 InvalidAuthenticationToken.
 *   4. A client (token) still inside a Retry-After window → counted as a violation and,
 *      with enforceRetryAfter, throttled again for the remaining time.
 *   5. throttleNext() → 429 TooManyRequests / 503 serviceNotAvailable + Retry-After.
 *   6. failNext() → Graph error body for the status.
 *   7. The route: 400 unknown segment, 405 non-GET, 404 itemNotFound, 410 resync, 200/302/304.
 * Every response carries `request-id` / `client-request-id` and is delayed by the latency.
 *
 * Change notifications (subscriptions.ts): `/subscriptions` creates, lists, renews and deletes
 * subscriptions on drive roots after Graph's validation handshake with the notification URL;
 * after every request and control method, each live subscription on a drive that changed is
 * POSTed a change notification in the background (plain fetch), and `sendLifecycleNotification`
 * POSTs lifecycle notifications. An expired subscription (the clock option) gets nothing.
 */
import type http from 'node:http';
import { z } from 'zod';
import { Rng } from '../shared/prng';
import { SimulatorHost } from '../shared/simulator-host';
import { fileName, makeDriveIdentity, makeTenant, mimeForName, seedKey, type DriveType, type Tenant } from './data';
import { contentBase, parseRange, streamContent } from './content';
import { DeltaListings } from './delta';
import { errorBody, formatRetryAfter, GraphError, injectedFailure, throttleBody, type RequestIds } from './errors';
import { handleApi, type GraphState, type RequestContext } from './routes';
import { driveItemJson, driveJson, eTag, userJson, type GraphDrive, type GraphDriveItem, type GraphUser } from './serialize';
import { DriveStore, KIND_FILE, validateName } from './store';
import { GraphSubscriptions, type GraphSubscription, type LifecycleEvent } from './subscriptions';
import type { WebhookDeliveryRecord } from '../shared/webhook-sender';
import { acceptFragment, sessionStatusJson, UploadSessions, writeFile, writtenItemJson } from './writes';
import { TOKEN, TokenCodec } from './tokens';

// ---------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------

export const GRAPH_DEFAULT_ACCESS_TOKEN = 'sandbox-graph-token';

const DriveOptionsSchema = z
  .object({
    /** Files generated at start (plus about one folder per 25 files). */
    fileCount: z.number().int().min(0).max(2_000_000).default(200),
    driveType: z.enum(['personal', 'business', 'documentLibrary']).default('business'),
    /** Drive name; defaults to "OneDrive" (personal/business) or "Documents" (library). */
    name: z.string().min(1).optional(),
  })
  .strict();

export const GraphSimulatorOptionsSchema = z
  .object({
    /** Seed for all generated data. Same seed + same operations ⇒ identical responses. */
    seed: z.number().finite().default(1),
    /** Drives; the first is `/me/drive`. */
    drives: z.array(DriveOptionsSchema).min(1).max(100).prefault([{}]),
    /** Accepted bearer tokens (more can be added with addAccessToken). */
    accessTokens: z.array(z.string().min(1)).default([GRAPH_DEFAULT_ACCESS_TOKEN]),
    /** Page size of children, /me/drives and delta when `$top` is absent. */
    defaultPageSize: z.number().int().positive().default(200),
    /** Larger `$top` values are clamped to this. */
    maxPageSize: z.number().int().positive().default(1000),
    /** Lifetime of `@microsoft.graph.downloadUrl` / the /content redirect target. */
    downloadUrlTtlMs: z.number().positive().default(3_600_000),
    /** How long an upload session stays open (its URL answers 404 after that). */
    uploadSessionTtlMs: z.number().positive().default(3_600_000),
    /** Artificial delay (ms) before every response; see also `setLatency`. */
    latencyMs: z.number().min(0).default(0),
    /**
     * Clock (epoch ms) for change timestamps, download-URL expiry, Retry-After windows and
     * the request log. Defaults to Date.now. Never used for the generated data.
     */
    now: z.custom<() => number>((v) => typeof v === 'function', { message: 'now must be a function' }).optional(),
    /**
     * A request from a throttled client (same token) arriving before its Retry-After has
     * elapsed is throttled again. Violations are counted either way.
     */
    enforceRetryAfter: z.boolean().default(true),
  })
  .strict()
  .refine((o) => o.defaultPageSize <= o.maxPageSize, {
    message: 'defaultPageSize must not exceed maxPageSize',
    path: ['defaultPageSize'],
  });

export type GraphSimulatorOptions = z.input<typeof GraphSimulatorOptionsSchema>;
export type ResolvedGraphSimulatorOptions = z.output<typeof GraphSimulatorOptionsSchema>;

// ---------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------

export interface GraphRequestLogEntry {
  /** Arrival time, epoch ms from the simulator clock. */
  at: number;
  method: string;
  path: string;
  /** Query parameters (repeated ones as arrays); `tempauth` and bearer tokens are redacted. */
  query: Record<string, string | string[]>;
  status: number;
  /** Answered by throttling (throttleNext or an enforced Retry-After). */
  throttled: boolean;
}

export interface GraphSimulatorStats {
  /** All requests received (any status, download URLs included). */
  requests: number;
  byStatus: Record<number, number>;
  /** Requests answered 429/503 by throttling (not failNext injections). */
  throttled: number;
  /** Requests from a throttled client that arrived before its Retry-After elapsed. */
  retryAfterViolations: number;
}

export interface ThrottleOptions {
  status?: 429 | 503;
  /** Retry-After in seconds (decimals allowed, e.g. 1.5). Default 1.5. */
  retryAfterSeconds?: number;
}

export interface GraphSimulator {
  /** Starts listening on 127.0.0.1 (port 0 = any free port); resolves with `http://127.0.0.1:PORT`. */
  start(port?: number): Promise<string>;
  stop(): Promise<void>;
  /** Base URL while started, else null. API calls go to `${url}/v1.0/...`. */
  readonly url: string | null;
  readonly options: Readonly<ResolvedGraphSimulatorOptions>;

  // Injection
  /** The next `n` authenticated API requests are throttled (429 by default) with Retry-After. */
  throttleNext(n: number, options?: ThrottleOptions): void;
  /** The next `n` requests (authenticated API calls and valid download URLs) fail with `status`. */
  failNext(n: number, status?: number): void;
  setLatency(ms: number): void;
  /** New content version for `count` seeded-random live files (first drive, or `driveId`) or the given ids. */
  editFiles(countOrIds: number | readonly string[], options?: { driveId?: string }): string[];
  /**
   * Deletes `count` seeded-random live files, or the given items; a folder takes its
   * descendants with it. Returns every deleted id (given ones first, then descendants).
   */
  deleteItems(countOrIds: number | readonly string[], options?: { driveId?: string }): string[];
  /** Adds `n` files under `parentId` (default: seeded-random folders of the drive). */
  addFiles(n: number, options?: { driveId?: string; parentId?: string }): string[];
  renameItem(id: string, name: string): void;
  moveItem(id: string, newParentId: string): void;
  /** Every delta token and delta nextLink issued so far now answers 410 resyncRequired. */
  expireDeltaTokens(): void;
  /**
   * POSTs a lifecycle notification (`{ value: [{ subscriptionId, subscriptionExpirationDateTime,
   * tenantId, clientState, lifecycleEvent }] }`) to the subscription's lifecycleNotificationUrl.
   * `subscriptionRemoved` also removes the subscription (no more change notifications);
   * `reauthorizationRequired` marks it until it is renewed or reauthorized. Throws for an
   * unknown or expired subscription, or one without a lifecycleNotificationUrl.
   */
  sendLifecycleNotification(subscriptionId: string, event: LifecycleEvent): void;
  /** Resolves when every change and lifecycle notification queued so far has been answered (or has failed). */
  flushNotifications(): Promise<void>;
  /** Sends a notification again (same body), standing in for Graph's retries, which the simulator does not make. */
  redeliverNotification(deliveryId: string): void;
  /**
   * Accepts `token` from now on. With `scopes` (the granted permission names), a token that
   * has no write permission (`Files.ReadWrite[.All]`, `Sites.ReadWrite.All`) can read but
   * every write answers 403 accessDenied; without, it may do anything.
   */
  addAccessToken(token: string, options?: { scopes?: readonly string[] }): void;
  revokeAccessToken(token: string): void;

  // Inspection
  /** Drive objects as GET /drives/{id} returns them (without @odata.context). */
  drives(): GraphDrive[];
  /** Live items (root first, parents before children) with `/drive/root:` paths, no download URLs. */
  items(driveId?: string): GraphDriveItem[];
  /** One live item like items() returns it, or undefined. */
  getItem(driveId: string, id: string): GraphDriveItem | undefined;
  /** The signed-in user as GET /me returns it (without @odata.context). */
  me(): GraphUser;
  /** The tenant id change notifications carry. */
  readonly tenantId: string;
  /** Live (unexpired) subscriptions as GET /subscriptions/{id} shows them, and whether one awaits reauthorization. */
  subscriptions(): Array<GraphSubscription & { reauthorizationRequired: boolean }>;
  /** Every notification attempt so far (validation requests are not included), oldest first. */
  notificationDeliveries(): WebhookDeliveryRecord[];
  stats(): GraphSimulatorStats;
  requestLog(): GraphRequestLogEntry[];
  /** Clears the request log and the stats (not throttling state). */
  resetStats(): void;
}

// ---------------------------------------------------------------------------------------
// Simulator
// ---------------------------------------------------------------------------------------

const EMPTY = Buffer.alloc(0);
/** Permissions that allow writing files (lower case; names compare case-insensitively). */
const WRITE_SCOPES = new Set(['files.readwrite', 'files.readwrite.all', 'sites.readwrite.all', 'files.readwrite.appfolder']);
/** Larger request bodies answer 413 (a fragment is at most 60 MiB). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

const JSON_TYPE = 'application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8';
const WWW_AUTHENTICATE =
  'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize", client_id="00000003-0000-0000-c000-000000000000"';

interface Outcome {
  status: number;
  headers: Record<string, string>;
  /** JSON body (undefined = empty). */
  body?: unknown;
  /** Streams a download body instead of JSON. */
  stream?: (res: http.ServerResponse) => void;
  throttled: boolean;
}

export function createGraphSimulator(options: GraphSimulatorOptions = {}): GraphSimulator {
  const opts = GraphSimulatorOptionsSchema.parse(options);
  const clock = opts.now ?? Date.now;
  const seedK = seedKey(opts.seed);
  const tenant: Tenant = makeTenant(seedK);
  const builtAt = clock();
  const drives = opts.drives.map(
    (d, k) => new DriveStore(k, makeDriveIdentity(seedK, tenant, k, d.driveType as DriveType, d.name), seedK, d.fileCount, builtAt),
  );
  const driveById = new Map(drives.map((d) => [d.ident.id, d]));
  const codec = new TokenCodec(Rng.from(seedK, 'token-secret').int(0, 0xffffffff));
  const listings = new DeltaListings(32);
  const accepted = new Set(opts.accessTokens);
  /** Tokens granted read permissions only: their writes answer 403. */
  const readOnly = new Set<string>();

  let epoch = 0;
  let downloadNonce = 0;
  let requestCounter = 0;
  let mutationCounter = 0;
  let throttleRemaining = 0;
  let throttleStatus: 429 | 503 = 429;
  let throttleSeconds = 1.5;
  /** Per token: end of its Retry-After window and the status it was throttled with. */
  const throttledUntil = new Map<string, { until: number; status: 429 | 503 }>();

  let log: GraphRequestLogEntry[] = [];
  let byStatus: Record<number, number> = {};
  let throttledCount = 0;
  let violations = 0;

  const host = new SimulatorHost('Graph', (req, res) => handle(req, res), opts.latencyMs);

  const subscriptions = new GraphSubscriptions({ seedK, tenant, drives, driveById, clock });
  /** Runs a control method, then notifies the subscriptions of the drives it changed. */
  function mutating<T>(f: () => T): T {
    try {
      return f();
    } finally {
      subscriptions.notifyChangedDrives();
    }
  }

  const uploads = new UploadSessions(opts.uploadSessionTtlMs);
  const state: GraphState = {
    uploads,
    mintUploadUrl(base, sessionId) {
      return `${base}/_upload/session?guid=${sessionId}&tempauth=${codec.encode(TOKEN.upload, [sessionId])}`;
    },
    tenant,
    drives,
    driveById,
    codec,
    listings,
    epoch: () => epoch,
    defaultPageSize: opts.defaultPageSize,
    maxPageSize: opts.maxPageSize,
    mintDownloadUrl(base, store, i, now) {
      const token = codec.encode(TOKEN.download, [store.driveIndex, i, Math.floor(now + opts.downloadUrlTtlMs), ++downloadNonce]);
      return `${base}/_download/${encodeURIComponent(store.ident.id)}/${encodeURIComponent(store.ids[i])}?tempauth=${token}`;
    },
  };

  // ---- responses -------------------------------------------------------------------------

  function error(ids: RequestIds, e: GraphError): Outcome {
    return { status: e.status, headers: { ...e.headers }, body: errorBody(e.code, e.message, ids, e.inner), throttled: false };
  }

  function throttle(ids: RequestIds, status: 429 | 503, seconds: number): Outcome {
    throttledCount++;
    return { status, headers: { 'retry-after': formatRetryAfter(seconds) }, body: throttleBody(status, ids), throttled: true };
  }

  function injected(ids: RequestIds): Outcome | null {
    const failStatus = host.takeFailure();
    if (failStatus === null) return null;
    const f = injectedFailure(failStatus);
    return error(ids, new GraphError(failStatus, f.code, f.message));
  }

  // ---- download URLs ---------------------------------------------------------------------

  function download(method: string, rawPath: string, query: URLSearchParams, range: string | undefined, ids: RequestIds): Outcome {
    const m = /^\/_download\/([^/]+)\/([^/]+)$/.exec(rawPath);
    const unauth = (message: string) => error(ids, new GraphError(401, 'unauthenticated', message));
    if (!m) return error(ids, new GraphError(404, 'itemNotFound', 'The resource could not be found.'));
    const tempauth = query.getAll('tempauth');
    const f = tempauth.length === 1 ? codec.decodeInts(TOKEN.download, tempauth[0], 4) : null;
    let driveId = '';
    let itemId = '';
    try {
      driveId = decodeURIComponent(m[1]);
      itemId = decodeURIComponent(m[2]);
    } catch {
      return unauth('The pre-authenticated download URL is not valid.');
    }
    const store = f ? drives[f[0]] : undefined;
    if (!f || !store || store.ident.id !== driveId || store.ids[f[1]] !== itemId) {
      return unauth('The pre-authenticated download URL is not valid.');
    }
    if (ids.now >= f[2]) return unauth('The pre-authenticated download URL has expired. Request the item again for a new one.');
    if (method !== 'GET' && method !== 'HEAD') {
      return error(ids, new GraphError(405, 'BadRequest', 'Specified HTTP method is not allowed for the request target.', { allow: 'GET, HEAD' }));
    }
    const failure = injected(ids);
    if (failure) return failure;
    const i = f[1];
    if (!store.isLive(i) || store.kind[i] !== KIND_FILE) return error(ids, new GraphError(404, 'itemNotFound', 'The resource could not be found.'));

    const size = store.size[i];
    const name = store.names[i];
    const headers: Record<string, string> = {
      'content-type': mimeForName(name),
      'accept-ranges': 'bytes',
      etag: eTag(store, i),
      'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
    };
    const r = parseRange(range, size);
    if (r === 'unsatisfiable') {
      return error(ids, new GraphError(416, 'invalidRange', 'The requested range is not satisfiable.', { 'content-range': `bytes */${size}` }));
    }
    const start = r ? r.start : 0;
    const end = r ? r.end : size - 1;
    headers['content-length'] = String(end - start + 1);
    if (r) headers['content-range'] = `bytes ${start}-${end}/${size}`;
    const uploaded = store.uploaded.get(i);
    const base = uploaded ? null : contentBase(store, i);
    return {
      status: r ? 206 : 200,
      headers,
      throttled: false,
      stream: (res) => {
        if (method === 'HEAD' || end < start) res.end();
        else if (uploaded) res.end(uploaded.subarray(start, end + 1));
        else streamContent(res, base!, start, end);
      },
    };
  }

  // ---- upload session URLs ---------------------------------------------------------------

  function uploadUrl(req: http.IncomingMessage, method: string, rawPath: string, query: URLSearchParams, body: Buffer, ids: RequestIds): Outcome {
    if (req.headers.authorization !== undefined) {
      return error(ids, new GraphError(401, 'unauthenticated', 'The upload URL is pre-authenticated: send no Authorization header with it.'));
    }
    const guid = query.get('guid') ?? '';
    const tempauth = query.getAll('tempauth');
    const f = rawPath === '/_upload/session' && tempauth.length === 1 ? codec.decodeInts(TOKEN.upload, tempauth[0], 1) : null;
    const session = f && String(f[0]) === guid ? uploads.get(f[0], ids.now) : undefined;
    if (!session) return error(ids, new GraphError(404, 'itemNotFound', 'The upload session was not found (it expired, was cancelled or completed).'));
    const failure = injected(ids);
    if (failure) return failure;
    const json = (status: number, b: unknown): Outcome => ({ status, headers: {}, body: b, throttled: false });
    try {
      switch (method) {
        case 'GET':
          return json(200, sessionStatusJson(session));
        case 'DELETE':
          uploads.delete(session.id);
          return { status: 204, headers: {}, throttled: false };
        case 'PUT': {
          const range = req.headers['content-range'];
          const whole = acceptFragment(session, typeof range === 'string' ? range : undefined, body);
          if (!whole) return json(202, sessionStatusJson(session));
          uploads.delete(session.id);
          const { index, created } = writeFile(session.placement, whole, session.conflict, ids.now);
          return json(created ? 201 : 200, writtenItemJson(session.placement.store, tenant, index, session.pathMode));
        }
        default:
          return error(ids, new GraphError(405, 'BadRequest', 'Specified HTTP method is not allowed for the request target.', { allow: 'GET, PUT, DELETE' }));
      }
    } catch (err) {
      if (err instanceof GraphError) return error(ids, err);
      throw err;
    }
  }

  // ---- API requests ----------------------------------------------------------------------

  function api(
    req: http.IncomingMessage,
    method: string,
    rawPath: string,
    rawQuery: string,
    query: URLSearchParams,
    body: Buffer,
    ids: RequestIds,
  ): Outcome | Promise<Outcome> {
    const m = /^\/(v1\.0|beta)(\/.*)?$/.exec(rawPath);
    if (!m) {
      const v = rawPath.split('/')[1] ?? '';
      return error(ids, new GraphError(400, 'BadRequest', v ? `Invalid version: ${v}` : 'Invalid version'));
    }
    const header = req.headers.authorization;
    const bearer = typeof header === 'string' ? /^Bearer\s+(\S.*)$/i.exec(header.trim()) : null;
    if (!bearer) {
      return error(ids, new GraphError(401, 'InvalidAuthenticationToken', 'Access token is empty.', { 'www-authenticate': WWW_AUTHENTICATE }));
    }
    const token = bearer[1].trim();
    if (!accepted.has(token)) {
      return error(
        ids,
        new GraphError(401, 'InvalidAuthenticationToken', 'Access token has expired or is not yet valid.', { 'www-authenticate': WWW_AUTHENTICATE }),
      );
    }
    const window = throttledUntil.get(token);
    if (window && ids.now < window.until) {
      violations++;
      if (opts.enforceRetryAfter) return throttle(ids, window.status, (window.until - ids.now) / 1000);
    } else if (window) {
      throttledUntil.delete(token);
    }
    if (throttleRemaining > 0) {
      throttleRemaining--;
      throttledUntil.set(token, { until: ids.now + throttleSeconds * 1000, status: throttleStatus });
      return throttle(ids, throttleStatus, throttleSeconds);
    }
    const failure = injected(ids);
    if (failure) return failure;
    if (method !== 'GET' && method !== 'HEAD' && readOnly.has(token)) {
      return error(ids, new GraphError(403, 'accessDenied', 'The caller does not have permission to perform the action.'));
    }

    if (subscriptions.isSubscriptionPath(m[2] ?? '/')) {
      const request = {
        method,
        path: m[2] ?? '/',
        body,
        base: host.url ?? 'http://127.0.0.1',
        version: m[1] as 'v1.0' | 'beta',
        now: ids.now,
        requestId: ids.requestId,
      };
      return subscriptions.handle(request).then(
        (reply): Outcome => ({ status: reply.status, headers: reply.headers ?? {}, body: reply.body, throttled: false }),
        (err: unknown) =>
          err instanceof GraphError ? error(ids, err) : error(ids, new GraphError(500, 'generalException', 'An unspecified error has occurred.')),
      );
    }
    const ctx: RequestContext = {
      base: host.url ?? 'http://127.0.0.1',
      version: m[1] as 'v1.0' | 'beta',
      method,
      rawPath: m[2] ?? '/',
      rawQuery,
      query,
      ifNoneMatch: typeof req.headers['if-none-match'] === 'string' ? req.headers['if-none-match'] : undefined,
      now: ids.now,
      body,
    };
    try {
      const reply = handleApi(state, ctx);
      return { status: reply.status, headers: reply.headers ?? {}, body: reply.body, throttled: false };
    } catch (err) {
      if (err instanceof GraphError) return error(ids, err);
      return error(ids, new GraphError(500, 'generalException', 'An unspecified error has occurred.'));
    }
  }

  function redactedQuery(query: URLSearchParams): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    for (const name of new Set(query.keys())) {
      const values = query.getAll(name).map((v) => (name.toLowerCase() === 'tempauth' || accepted.has(v) ? '[redacted]' : v));
      out[name] = values.length === 1 ? values[0] : values;
    }
    return out;
  }

  /** Reads a write's body first (up to MAX_BODY_BYTES); reads go straight on. */
  function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const method = (req.method ?? 'GET').toUpperCase();
    if (method !== 'PUT' && method !== 'POST' && method !== 'PATCH') {
      answer(req, res, EMPTY, false);
      return;
    }
    const chunks: Buffer[] = [];
    let length = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => answer(req, res, tooLarge ? EMPTY : Buffer.concat(chunks), tooLarge));
    req.on('error', () => res.destroy());
  }

  function answer(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, tooLarge: boolean): void {
    const now = clock();
    const method = (req.method ?? 'GET').toUpperCase();
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
    const rawQuery = q < 0 ? '' : rawUrl.slice(q + 1);
    const query = new URLSearchParams(rawQuery);
    const requestId = Rng.from(seedK, 'request', ++requestCounter).uuid();
    const given = req.headers['client-request-id'];
    const clientRequestId = typeof given === 'string' && /^[\w-]{1,100}$/.test(given) ? given : requestId;
    const ids: RequestIds = { requestId, clientRequestId, now };

    const rangeHeader = req.headers.range;
    const pending = tooLarge
      ? error(ids, new GraphError(413, 'invalidRequest', `The request body exceeds the simulator's ${MAX_BODY_BYTES} bytes.`))
      : rawPath.startsWith('/_download/')
        ? download(method, rawPath, query, typeof rangeHeader === 'string' ? rangeHeader : undefined, ids)
        : rawPath.startsWith('/_upload/')
          ? uploadUrl(req, method, rawPath, query, body, ids)
          : api(req, method, rawPath, rawQuery, query, body, ids);
    // Drain any request body so keep-alive connections stay usable.
    req.resume();
    if (pending instanceof Promise) void pending.then((outcome) => finish(res, method, rawPath, query, now, requestId, clientRequestId, outcome));
    else finish(res, method, rawPath, query, now, requestId, clientRequestId, pending);
  }

  function finish(
    res: http.ServerResponse,
    method: string,
    rawPath: string,
    query: URLSearchParams,
    now: number,
    requestId: string,
    clientRequestId: string,
    outcome: Outcome,
  ): void {
    // A write through the API (or an upload session's last fragment) notifies the drive's subscriptions.
    subscriptions.notifyChangedDrives();
    log.push({ at: now, method, path: rawPath, query: redactedQuery(query), status: outcome.status, throttled: outcome.throttled });
    byStatus[outcome.status] = (byStatus[outcome.status] ?? 0) + 1;

    const send = () => {
      if (res.writableEnded || res.destroyed) return;
      const headers: Record<string, string> = {
        'request-id': requestId,
        'client-request-id': clientRequestId,
        'x-ms-ags-diagnostic': '{"ServerInfo":{"DataCenter":"Sandbox","Slice":"E","Ring":"1","ScaleUnit":"000","RoleInstance":"SANDBOX-GRAPH"}}',
        ...outcome.headers,
      };
      if (outcome.stream) {
        res.writeHead(outcome.status, headers);
        outcome.stream(res);
        return;
      }
      if (outcome.body === undefined) {
        res.writeHead(outcome.status, { ...headers, 'content-length': '0' });
        res.end();
        return;
      }
      const payload = JSON.stringify(outcome.body);
      res.writeHead(outcome.status, {
        'content-type': JSON_TYPE,
        'odata-version': '4.0',
        'cache-control': 'no-cache',
        'content-length': String(Buffer.byteLength(payload)),
        ...headers,
      });
      res.end(payload);
    };
    host.respondAfter(send);
  }

  // ---- injection helpers -----------------------------------------------------------------

  function storeFor(driveId: string | undefined, op: string): DriveStore {
    if (driveId === undefined) return drives[0];
    const s = driveById.get(driveId);
    if (!s) throw new Error(`${op}: unknown drive id ${driveId}`);
    return s;
  }

  /** Finds a live item by id on any drive (ids are unique across drives). */
  function locate(id: string, op: string): { store: DriveStore; i: number } {
    for (const store of drives) {
      const i = store.liveIndex(id);
      if (i >= 0) return { store, i };
    }
    throw new Error(`${op}: unknown or deleted item id ${id}`);
  }

  function checkCount(n: number, op: string): void {
    if (!Number.isInteger(n) || n < 0) throw new Error(`${op}: count must be a non-negative integer`);
  }

  /** Targets grouped by drive, in first-seen order. */
  function targets(countOrIds: number | readonly string[], driveId: string | undefined, op: string): Map<DriveStore, number[]> {
    const rng = Rng.from(seedK, 'mutation', mutationCounter++, op);
    const out = new Map<DriveStore, number[]>();
    if (typeof countOrIds === 'number') {
      checkCount(countOrIds, op);
      const store = storeFor(driveId, op);
      out.set(store, rng.sample(store.liveFiles(), countOrIds));
      return out;
    }
    for (const id of new Set(countOrIds)) {
      const { store, i } = locate(id, op);
      if (driveId !== undefined && store.ident.id !== driveId) throw new Error(`${op}: item ${id} is not on drive ${driveId}`);
      let list = out.get(store);
      if (!list) out.set(store, (list = []));
      list.push(i);
    }
    return out;
  }

  function inspectItem(store: DriveStore, i: number): GraphDriveItem {
    return driveItemJson(store, tenant, i, { pathMode: 'drive' });
  }

  const sim: GraphSimulator = {
    start: (port = 0) => host.start(port),
    stop: () => {
      // Notifications under way end as errors ("aborted") rather than outlive the simulator.
      subscriptions.abortAll();
      return host.stop();
    },
    get url() {
      return host.url;
    },
    options: opts,

    throttleNext(n, o = {}) {
      checkCount(n, 'throttleNext');
      const status = o.status ?? 429;
      if (status !== 429 && status !== 503) throw new Error('throttleNext: status must be 429 or 503');
      const seconds = o.retryAfterSeconds ?? 1.5;
      if (!Number.isFinite(seconds) || seconds <= 0) throw new Error('throttleNext: retryAfterSeconds must be positive');
      throttleRemaining = n;
      throttleStatus = status;
      throttleSeconds = seconds;
    },
    failNext: (n, status = 500) => host.failNext(n, status),
    setLatency: (ms) => host.setLatency(ms),
    editFiles(countOrIds, o = {}) {
      return mutating(() => {
        const now = clock();
        const out: string[] = [];
        for (const [store, list] of targets(countOrIds, o.driveId, 'editFiles')) {
          for (const i of list) if (store.kind[i] !== KIND_FILE) throw new Error(`editFiles: ${store.ids[i]} is not a file`);
          store.editFiles(list, now);
          out.push(...list.map((i) => store.ids[i]));
        }
        return out;
      });
    },
    deleteItems(countOrIds, o = {}) {
      return mutating(() => {
        const now = clock();
        const groups = targets(countOrIds, o.driveId, 'deleteItems');
        for (const list of groups.values()) {
          if (list.includes(0)) throw new Error('deleteItems: the drive root cannot be deleted');
        }
        const out: string[] = [];
        for (const [store, list] of groups) out.push(...store.deleteItems(list, now).map((i) => store.ids[i]));
        return out;
      });
    },
    addFiles(n, o = {}) {
      return mutating(() => {
        checkCount(n, 'addFiles');
        const now = clock();
        const rng = Rng.from(seedK, 'mutation', mutationCounter++, 'addFiles');
        let store: DriveStore;
        let fixedParent = -1;
        if (o.parentId !== undefined) {
          const found = locate(o.parentId, 'addFiles');
          if (o.driveId !== undefined && found.store.ident.id !== o.driveId) throw new Error(`addFiles: ${o.parentId} is not on drive ${o.driveId}`);
          if (found.store.kind[found.i] === KIND_FILE) throw new Error(`addFiles: ${o.parentId} is a file, not a folder`);
          store = found.store;
          fixedParent = found.i;
        } else {
          store = storeFor(o.driveId, 'addFiles');
        }
        const containers = fixedParent >= 0 ? [fixedParent] : store.liveContainers();
        const placement = [];
        for (let k = 0; k < n; k++) {
          placement.push({ parent: rng.pick(containers), name: fileName(store.dk, store.count + k, mutationCounter) });
        }
        return store.addFiles(placement, now).map((i) => store.ids[i]);
      });
    },
    renameItem(id, name) {
      return mutating(() => {
        const { store, i } = locate(id, 'renameItem');
        if (i === 0) throw new Error('renameItem: the drive root cannot be renamed');
        const problem = validateName(name);
        if (problem) throw new Error(`renameItem: ${problem}`);
        const clash = store.childNamed(store.parent[i], name);
        if (clash >= 0 && clash !== i) throw new Error(`renameItem: nameAlreadyExists: "${name}" is already used in that folder`);
        store.rename(i, name, clock());
      });
    },
    moveItem(id, newParentId) {
      return mutating(() => {
        const { store, i } = locate(id, 'moveItem');
        if (i === 0) throw new Error('moveItem: the drive root cannot be moved');
        const p = store.liveIndex(newParentId);
        if (p < 0) throw new Error(`moveItem: unknown or deleted folder ${newParentId} on the item's drive`);
        if (store.kind[p] === KIND_FILE) throw new Error(`moveItem: ${newParentId} is a file, not a folder`);
        if (store.isDescendant(p, i)) throw new Error('moveItem: cannot move a folder into itself or its descendants');
        if (store.parent[i] === p) return;
        if (store.childNamed(p, store.names[i]) >= 0) throw new Error(`moveItem: nameAlreadyExists: "${store.names[i]}" is already used in the target folder`);
        store.move(i, p, clock());
      });
    },
    expireDeltaTokens() {
      epoch++;
      listings.clear();
    },
    sendLifecycleNotification(subscriptionId, event) {
      subscriptions.sendLifecycle(subscriptionId, event);
    },
    flushNotifications: () => subscriptions.flush(),
    redeliverNotification(deliveryId) {
      subscriptions.redeliver(deliveryId);
    },
    addAccessToken(token, o = {}) {
      if (typeof token !== 'string' || token.length === 0) throw new Error('addAccessToken: token must be a non-empty string');
      accepted.add(token);
      if (o.scopes && !o.scopes.some((s) => WRITE_SCOPES.has(s.toLowerCase()))) readOnly.add(token);
      else readOnly.delete(token);
    },
    revokeAccessToken(token) {
      accepted.delete(token);
      readOnly.delete(token);
      throttledUntil.delete(token);
    },

    drives() {
      return drives.map((d) => driveJson(d, tenant));
    },
    items(driveId) {
      const stores = driveId === undefined ? drives : [storeFor(driveId, 'items')];
      const out: GraphDriveItem[] = [];
      for (const store of stores) for (const i of store.preorder(0)) out.push(inspectItem(store, i));
      return out;
    },
    getItem(driveId, id) {
      const store = driveById.get(driveId);
      if (!store) return undefined;
      const i = store.liveIndex(id);
      return i < 0 ? undefined : inspectItem(store, i);
    },
    me() {
      return userJson(tenant);
    },
    tenantId: subscriptions.tenantId,
    subscriptions: () => subscriptions.list(),
    notificationDeliveries: () => subscriptions.deliveries(),
    stats() {
      return { requests: log.length, byStatus: { ...byStatus }, throttled: throttledCount, retryAfterViolations: violations };
    },
    requestLog() {
      return log.map((e) => ({ ...e, query: structuredClone(e.query) }));
    },
    resetStats() {
      log = [];
      byStatus = {};
      throttledCount = 0;
      violations = 0;
    },
  };
  return sim;
}
