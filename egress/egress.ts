import type { Readable } from 'node:stream';
import { Agent, request as undiciRequest } from 'undici';
import { WeftError } from '../common/errors';
import { AddressPolicy, parseAddress, parseAllowList } from './address-policy';
import { CredentialsOverHttpError, EgressRefusedError, EgressTimeoutError } from './errors';
import { guardedConnector } from './guarded-connector';
import { ALLOW_VARIABLE, type EgressPurpose } from './purposes';

export type { EgressPurpose } from './purposes';

/** Allow-list entries (CIDRs, IP addresses, host:port) and where they came from, for error messages. */
export interface AllowSource {
  /** The variable (or, for servers a process started itself, a description) the entries came from. */
  variable: string;
  entries: readonly string[];
}

/** How one purpose's egress is set up (from WEFT_EGRESS_* in common/config.ts, egress/settings.ts). */
export interface EgressSettings<P extends EgressPurpose> {
  purpose: P;
  allow: readonly AllowSource[];
  connectTimeoutMs: number;
  /** From sending the request to the end of the response headers. */
  headersTimeoutMs: number;
  /** From the response headers to the end of the response body (the whole body, not per chunk). */
  bodyTimeoutMs: number;
}

export interface EgressRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** The caller's own cancellation (an activity cancelled, a shorter per-attempt limit). */
  signal?: AbortSignal;
}

export interface EgressResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The whole body, read within the body timeout. */
  body: Buffer;
}

export interface EgressStreamRequest {
  method?: string;
  headers?: Record<string, string>;
  /** Bytes, or a stream sent as it is read (a stream can be sent once: the caller decides about retries). */
  body?: string | Uint8Array | Readable;
  signal?: AbortSignal;
}

export interface EgressStreamResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /**
   * The body as it arrives. Read it to the end or destroy it, or the connection stays taken.
   * There is no whole-body deadline (a large download takes its time); a silence longer
   * than the body timeout between two chunks ends it with an error.
   */
  body: Readable;
}

/**
 * The one way out of Weft: every request to a third party or to the app's webhook URLs.
 * Destinations pass the address policy of the egress's purpose (checked on the address
 * connected to), redirects are never followed (a 3xx is handed back as it is), and every
 * call is bounded by the connect, headers and body timeouts. The purpose is part of the
 * type: code that calls providers takes an `Egress<'providers'>` and cannot be handed the
 * webhooks' one (whose allow-list may open internal addresses), nor the other way round.
 */
export interface Egress<P extends EgressPurpose> {
  readonly purpose: P;
  request(url: string | URL, req?: EgressRequest): Promise<EgressResponse>;
  /**
   * The same call with both bodies streamed (the proxy): same address policy, connect and
   * headers timeouts, no redirects followed; resolves when the response headers arrive.
   */
  stream(url: string | URL, req?: EgressStreamRequest): Promise<EgressStreamResponse>;
  /** The same exchange as a `fetch` function, for libraries that take one (oauth4webapi). */
  fetch(input: string | URL, init?: RequestInit): Promise<Response>;
  /**
   * At registration: refuses (400 `egress_refused`) a URL whose host is a literal address
   * the policy refuses. Names are left to call time, when they are resolved.
   */
  checkUrl(url: string, what: string): void;
  /**
   * Before credentials are added to a call to `url`: throws CredentialsOverHttpError
   * (`credentials_over_http_refused`) unless it is https, or plain http to a host:port an
   * entry of this purpose's allow-list names exactly (a sandbox simulator, a server the
   * operator runs on a network they trust). A range or a bare address does not do.
   */
  checkCredentialTransport(url: string | URL, what?: string): void;
  close(): Promise<void>;
}

/** The process's ways out, one per purpose; each call site takes the one its purpose names. */
export interface Egresses {
  providers: Egress<'providers'>;
  webhooks: Egress<'webhooks'>;
  assets: Egress<'assets'>;
}

export function createEgress<P extends EgressPurpose>(settings: EgressSettings<P>): Egress<P> {
  return new PolicedEgress(settings);
}

class PolicedEgress<P extends EgressPurpose> implements Egress<P> {
  readonly purpose: P;
  private readonly policy: AddressPolicy;
  private readonly agent: Agent;

  constructor(private readonly settings: EgressSettings<P>) {
    this.purpose = settings.purpose;
    this.policy = new AddressPolicy(
      settings.allow.flatMap((source) => parseAllowList(source.entries, source.variable)),
      ALLOW_VARIABLE[settings.purpose],
    );
    this.agent = new Agent({
      connect: guardedConnector(this.policy, { connectTimeoutMs: settings.connectTimeoutMs }),
      headersTimeout: settings.headersTimeoutMs,
      // Per-chunk silence; the whole-body limit is enforced in request().
      bodyTimeout: settings.bodyTimeoutMs,
    });
  }

  async request(url: string | URL, req: EgressRequest = {}): Promise<EgressResponse> {
    const target = httpTarget(url);
    const deadline = new AbortController();
    const signal = req.signal ? AbortSignal.any([req.signal, deadline.signal]) : deadline.signal;
    let res: Awaited<ReturnType<typeof undiciRequest>>;
    try {
      res = await undiciRequest(target, { method: (req.method ?? 'GET') as 'GET', headers: req.headers, body: req.body, signal, dispatcher: this.agent });
    } catch (err) {
      throw this.describeFailure(err, target, null);
    }
    let bodyTimedOut = false;
    const timer = setTimeout(() => {
      bodyTimedOut = true;
      deadline.abort();
    }, this.settings.bodyTimeoutMs);
    try {
      const body = Buffer.from(await res.body.arrayBuffer());
      return { status: res.statusCode, headers: flattenHeaders(res.headers), body };
    } catch (err) {
      throw this.describeFailure(err, target, bodyTimedOut ? 'body' : null);
    } finally {
      clearTimeout(timer);
    }
  }

  async stream(url: string | URL, req: EgressStreamRequest = {}): Promise<EgressStreamResponse> {
    const target = httpTarget(url);
    try {
      const res = await undiciRequest(target, {
        method: (req.method ?? 'GET') as 'GET',
        headers: req.headers,
        body: req.body,
        signal: req.signal,
        dispatcher: this.agent,
      });
      // A body that fails before its reader attaches (or after it left) must not crash the
      // process as an unhandled 'error'; readers still receive the error themselves.
      res.body.on('error', () => undefined);
      return { status: res.statusCode, headers: flattenHeaders(res.headers), body: res.body };
    } catch (err) {
      throw this.describeFailure(err, target, null);
    }
  }

  fetch = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    let body: string | Uint8Array | undefined;
    if (typeof init.body === 'string') body = init.body;
    else if (init.body instanceof URLSearchParams) {
      body = init.body.toString();
      headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    } else if (init.body instanceof Uint8Array) body = init.body;
    else if (init.body instanceof ArrayBuffer) body = new Uint8Array(init.body);
    else if (init.body != null) throw new TypeError('egress.fetch sends string, URLSearchParams or byte bodies only');
    const res = await this.request(input, { method: init.method, headers, body, signal: init.signal ?? undefined });
    const bodyless = res.status === 204 || res.status === 205 || res.status === 304;
    return new Response(bodyless ? null : res.body, { status: res.status, headers: res.headers });
  };

  checkUrl(url: string, what: string): void {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return; // the request schema reports malformed URLs
    }
    // URL parsing already turned 0x7f.1, 2130706433 and friends into dotted quads.
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!parseAddress(host)) return;
    const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
    const refusal = this.policy.check({ host, address: host, port });
    if (refusal) throw new EgressRefusedError(refusal, 400, what);
  }

  checkCredentialTransport(url: string | URL, what?: string): void {
    const target = new URL(url);
    // https is what credentials need; other schemes are refused by the call itself.
    if (target.protocol !== 'http:') return;
    if (this.policy.namesHostPort(target.hostname, Number(target.port) || 80)) return;
    throw new CredentialsOverHttpError(target, this.policy.allowVariable, what);
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  /** Timeouts become EgressTimeoutError naming the phase and its setting; the rest pass through. */
  private describeFailure(err: unknown, target: URL, phase: 'body' | null): unknown {
    if (err instanceof WeftError) return err;
    const code = (err as { code?: string } | null)?.code;
    if (phase === 'body' || code === 'UND_ERR_BODY_TIMEOUT') return new EgressTimeoutError('body', target.host, this.settings.bodyTimeoutMs);
    if (code === 'UND_ERR_HEADERS_TIMEOUT') return new EgressTimeoutError('headers', target.host, this.settings.headersTimeoutMs);
    if (code === 'UND_ERR_CONNECT_TIMEOUT') return new EgressTimeoutError('connect', target.host, this.settings.connectTimeoutMs);
    return err;
  }
}

function httpTarget(url: string | URL): URL {
  const target = new URL(url);
  if (target.protocol !== 'https:' && target.protocol !== 'http:') {
    throw new WeftError('egress_unsupported_protocol', `Only http and https URLs are called (got ${target.protocol}).`, 400);
  }
  return target;
}

function flattenHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}
