import net from 'node:net';

export const LOOPBACK = '127.0.0.1';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it). There is a short
 * window before the server binds it; ephemeral ports are handed out in rotation, so two
 * test runs starting together practically never receive the same one.
 */
export async function getFreePort(host = LOOPBACK): Promise<number> {
  const [port] = await getFreePorts(1, host);
  return port;
}

/** Several distinct free ports: all are held open together so the OS cannot repeat one. */
export async function getFreePorts(count: number, host = LOOPBACK): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      servers.push(server);
      ports.push(await listen(server, 0, host));
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

/** Whether `port` can be bound on `host` right now. */
export async function isPortFree(port: number, host = LOOPBACK): Promise<boolean> {
  const server = net.createServer();
  try {
    await listen(server, port, host);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES') return false;
    throw err;
  } finally {
    await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  }
}

function listen(server: net.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    // exclusive: do not share the handle with cluster workers; the answer must be about this socket.
    server.listen({ port, host, exclusive: true }, () => {
      server.off('error', reject);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}
