import { createServer, STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import type { ApiDeps } from './deps';

export interface RunningApi {
  url: string;
  close(): Promise<void>;
}

/**
 * How long a client may take, so a slow or silent one cannot hold a socket (and the memory
 * of a half-read body) for long: Node's own defaults are 60 s for the headers and 5 minutes
 * for the whole request. These bound receiving the request only; a response that takes long
 * (a sync-mode action) is not cut short.
 */
export interface HttpTimeouts {
  /** Until the request line and headers are in. */
  headersTimeoutMs: number;
  /** Until the whole request, body included, is in (must be ≥ the headers timeout). */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this; raise it above a load balancer's idle timeout. */
  keepAliveTimeoutMs: number;
}

const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 65_000 };

export async function startApiServer(deps: ApiDeps, port: number, host = '127.0.0.1', timeouts: Partial<HttpTimeouts> = {}): Promise<RunningApi> {
  const app = createApp(deps);
  const t = { ...DEFAULT_HTTP_TIMEOUTS, ...timeouts };
  const server: Server = createServer(
    {
      headersTimeout: t.headersTimeoutMs,
      requestTimeout: Math.max(t.requestTimeoutMs, t.headersTimeoutMs),
      keepAliveTimeout: t.keepAliveTimeoutMs,
      // Node checks the two timeouts above on this interval (default 30 s, which would let a
      // 10 s timeout run to 40 s).
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(t.headersTimeoutMs / 2))),
    },
    app,
  );
  // The method of the request a socket is on, for an answer written straight to the socket.
  const methods = new WeakMap<object, string>();
  server.on('request', (req) => methods.set(req.socket, req.method ?? ''));
  server.on('clientError', (err, socket) => answerUnreadableRequest(err, socket, methods.get(socket)));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  return {
    url: `http://${host}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Requests Node's HTTP parser refuses before Express sees them (bytes that are not HTTP, an
 * unknown method, headers past 16 KB, a request not received within the timeouts) get the
 * API's error shape with a stable code instead of Node's bare status line.
 */
function answerUnreadableRequest(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex, method: string | undefined): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'headers_too_large', 'The request line and headers are larger than 16 KB.']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'The request was not received in time (headers or body stalled).']
        : [400, 'malformed_request', 'The request is not valid HTTP/1.1.'];
  const body = JSON.stringify({ error: { code, message } });
  // An answer to HEAD has the headers of the full answer and no body.
  const head = method === 'HEAD' || err.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${head ? '' : body}`,
  );
}
