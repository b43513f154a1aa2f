import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A server on 127.0.0.1 that counts every TCP connection it accepts, so a test can prove
 * that nothing reached it (not even a connection without a request).
 */
export interface RecordingServer {
  url: string;
  port: number;
  /** host:port, as a WEFT_EGRESS_ALLOW entry. */
  hostPort: string;
  connections: number;
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders }>;
  close(): Promise<void>;
}

export async function startRecordingServer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_req, res) => res.end('ok'),
): Promise<RecordingServer> {
  const server = http.createServer((req, res) => {
    rec.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    rec.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const rec: RecordingServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    hostPort: `127.0.0.1:${port}`,
    connections: 0,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  return rec;
}
