import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import type { ApiDeps } from './deps';

export interface RunningApi {
  url: string;
  close(): Promise<void>;
}

export async function startApiServer(deps: ApiDeps, port: number, host = '127.0.0.1'): Promise<RunningApi> {
  const app = createApp(deps);
  const server: Server = await new Promise((resolve, reject) => {
    // Express 5 passes a listen error to this callback instead of throwing.
    const s = app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(s)));
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
