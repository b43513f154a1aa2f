import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { BadRequestError } from '../../common/errors';
import { EgressRefusedError } from '../../egress/errors';
import { scrubSecrets } from '../../egress/redact';
import type { ResolvedProvider } from '../../runtime/http/provider-client';
import type { ApiDeps } from '../deps';
import type { ProxyHeaders } from '../schemas/proxy';
import { findProxiedConnection } from './proxy-lookup';
import { returnedProviderHeaders } from './proxy-response-headers';
import { isProviderHost, proxyTargetUrl } from './proxy-target';

/**
 * Request bodies up to this size (by Content-Length) are read before the call, so that an
 * attempt can be repeated (`Retries`, the one retry after a refreshed credential). Larger
 * bodies, and chunked ones of unknown length, are streamed to the provider as they arrive
 * and sent once: a failure of that one attempt is answered as it is.
 */
const REPLAYABLE_BODY_MAX_BYTES = 1024 * 1024;
/** Error answers up to this size have the connection's secrets scrubbed from their body. */
const ERROR_BODY_SCRUB_MAX_BYTES = 256 * 1024;

/** Prefixes of the headers the app passes through (stripped): Weft's, and Nango's as its SDK sends them. */
const PASS_THROUGH = /^(?:weft|nango)-proxy-(.+)$/;

/** Per-hop headers (RFC 9110 §7.6.1) and what a client may not choose for the provider's connection. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

export interface ProxyCall {
  environment: string;
  headers: ProxyHeaders;
  /** The request as it came (its other headers and its body). */
  request: IncomingMessage;
  method: string;
  /** Path and query after `/proxy`, still percent-encoded. */
  pathAndQuery: string;
  /** Aborted when the app goes away: the provider call stops too. */
  signal: AbortSignal;
}

export interface ProxyAnswer {
  status: number;
  headers: Record<string, string>;
  body: Readable;
}

/**
 * `ANY /proxy/<path>`: the app's request sent to the connection's provider with the
 * connection's credentials (none to a pre-authenticated URL), through the same session a sync uses (budget, throttle state,
 * refresh, request log with operation `proxy`); the provider's answer comes back as it is.
 */
export async function forwardProxyCall(deps: Pick<ApiDeps, 'stores' | 'cipher' | 'openProviderSession'>, call: ProxyCall): Promise<ProxyAnswer> {
  const { integration, connection, credentials, integrationCredentials } = await findProxiedConnection(
    deps.stores,
    deps.cipher,
    call.environment,
    call.headers['provider-config-key'],
    call.headers['connection-id'],
  );
  const session = deps.openProviderSession({
    environment: call.environment,
    integration,
    connection,
    credentials,
    integrationCredentials,
    connectionId: connection.connection_id,
    operation: 'proxy',
    runId: null,
    signal: call.signal,
  });
  const { provider } = session;
  const preAuthenticated = call.headers['weft-pre-authenticated'];
  // A pre-authenticated call names its host: never the integration's base URL by default.
  if (preAuthenticated && !call.headers['base-url-override']) throw new PreAuthenticatedWithoutHostError();
  const url = proxyTargetUrl(provider, call.pathAndQuery, call.headers['base-url-override']);
  const body = await requestBody(call.request, call.method);
  const headers = outgoingHeaders(provider, call.request.headers, body);
  try {
    const res = await session.client.forward({
      method: call.method,
      url: url.toString(),
      headers,
      body,
      retries: call.headers.retries,
      retryOn: call.headers['retry-on'],
      preAuthenticated,
      followRedirect: (location) => isProviderHost(provider, location),
    });
    const returned = returnedHeaders(provider, res.headers);
    // A HEAD answer has no body to scrub, and its Content-Length is the GET body's.
    if (res.status < 400 || call.method === 'HEAD') return { status: res.status, headers: returned, body: res.body };
    return scrubbedErrorAnswer(res.status, returned, res.body, res.secrets);
  } catch (err) {
    // Refused at call time (a name that resolved to a refused address): the app's request
    // named it, so it is the app's 400, as for a refused URL anywhere in the API.
    // (credentials_over_http_refused stays 424: the integration's base URL, not the request, is at fault.)
    if (err instanceof EgressRefusedError) throw new EgressRefusedError(err.refusal, 400, 'proxy target');
    throw err;
  }
}

class PreAuthenticatedWithoutHostError extends BadRequestError {
  constructor() {
    super(
      'pre_authenticated_without_base_url',
      'Weft-Pre-Authenticated: true needs Base-Url-Override, the origin of the pre-authenticated URL (a host the integration allows).',
    );
  }
}

/**
 * An error answer is small; a provider that echoes the credential it refused (some do) must
 * not hand it to the app's logs: its body is read and scrubbed. Success bodies stream untouched.
 */
async function scrubbedErrorAnswer(status: number, headers: Record<string, string>, body: Readable, secrets: string[]): Promise<ProxyAnswer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body.iterator({ destroyOnReturn: false })) {
    size += (chunk as Buffer).length;
    chunks.push(chunk as Buffer);
    if (size > ERROR_BODY_SCRUB_MAX_BYTES) {
      // Too large to be a plain error message: handed on as a stream, unscrubbed.
      return { status, headers, body: Readable.from(concatStreams(chunks, body)) };
    }
  }
  const text = Buffer.concat(chunks);
  const clean = Buffer.from(scrubSecrets(text.toString('latin1'), secrets), 'latin1');
  return { status, headers: { ...headers, 'content-length': String(clean.length) }, body: Readable.from([clean]) };
}

async function* concatStreams(head: Buffer[], rest: Readable): AsyncGenerator<Buffer> {
  yield* head;
  for await (const chunk of rest) yield chunk as Buffer;
}

async function requestBody(req: IncomingMessage, method: string): Promise<Buffer | Readable | null> {
  if (method === 'GET' || method === 'HEAD') return null;
  const chunked = req.headers['transfer-encoding'] !== undefined;
  const length = req.headers['content-length'];
  if (!chunked && (length === undefined || length === '0')) return null;
  if (chunked || Number(length) > REPLAYABLE_BODY_MAX_BYTES) return req;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > REPLAYABLE_BODY_MAX_BYTES) throw new BadRequestError('invalid_content_length', 'The request body is longer than its Content-Length says.');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * What goes to the provider: Weft's user agent and the provider's default headers, the
 * app's `Weft-Proxy-*` / `Nango-Proxy-*` headers (prefix stripped), the body's own
 * Content-Type / Content-Encoding / Content-Length; the credentials are added last, by the session.
 */
function outgoingHeaders(provider: ResolvedProvider, incoming: IncomingHttpHeaders, body: Buffer | Readable | null): Record<string, string> {
  const headers: Record<string, string> = { 'user-agent': 'weft/0.1 (+self-hosted integration platform)', ...provider.definition.defaultHeaders };
  for (const name of ['content-type', 'content-encoding'] as const) {
    const value = incoming[name];
    if (body !== null && typeof value === 'string') headers[name] = value;
  }
  for (const [name, value] of Object.entries(incoming)) {
    const m = PASS_THROUGH.exec(name);
    if (!m || value === undefined || HOP_BY_HOP.has(m[1])) continue;
    headers[m[1]] = Array.isArray(value) ? value.join(', ') : value;
  }
  if (Buffer.isBuffer(body)) headers['content-length'] = String(body.length);
  else if (body !== null && typeof incoming['content-length'] === 'string') headers['content-length'] = incoming['content-length'];
  return headers;
}

/** Each provider definition's secret header names, listed once (not on every call). */
const secretHeaderNames = new WeakMap<ResolvedProvider['definition'], string[]>();

/** The provider's headers the app gets: the allow-list of proxy-response-headers.ts, never one the provider declares secret. */
function returnedHeaders(provider: ResolvedProvider, headers: Record<string, string>): Record<string, string> {
  const definition = provider.definition;
  let secret = secretHeaderNames.get(definition);
  if (secret === undefined) {
    secret = [definition.apiKey?.header, ...(definition.secretHeaders ?? [])].filter((h): h is string => !!h).map((h) => h.toLowerCase());
    secretHeaderNames.set(definition, secret);
  }
  return returnedProviderHeaders(headers, secret);
}
