import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Sends `{ message }` (plus any extra fields) as JSON with the given status. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.writableEnded || res.destroyed) return;
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload).toString(),
    ...headers,
  });
  res.end(payload);
}

export interface LocalServer {
  server: http.Server;
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1 only (port 0 = any free port) and resolves with the base URL.
 * `close()` also drops idle keep-alive connections so tests finish promptly.
 */
export function listenLocal(handler: http.RequestListener, port = 0): Promise<LocalServer> {
  return new Promise((resolve, reject) => {
    const server = http.createServer(handler);
    // As real APIs keep idle connections (5 s or more), and above undici's 2 s safety margin:
    // with 1 s, clients (Weft's egress, the benches' fetch) opened a new connection per call.
    server.keepAliveTimeout = 5_000;
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', onError);
      const addr = server.address() as AddressInfo;
      const url = `http://127.0.0.1:${addr.port}`;
      resolve({
        server,
        url,
        port: addr.port,
        close: () =>
          new Promise<void>((res, rej) => {
            server.close((err) => (err ? rej(err) : res()));
            server.closeAllConnections();
          }),
      });
    });
  });
}
