import { connectMongo } from '../../store/mongo-client';
import { watchDatabase } from '../../store/database-watch';
import { startRestartableServers, type RestartableServers } from '../outage/servers';

/**
 * The failure this guards against was seen in CI, not made up: after FerretDB restarted, the
 * driver's monitor never checked the server again and every operation failed server
 * selection with the error that had marked it unknown. Here the monitor is stopped by hand
 * (the driver's internal interval) while the database is down, which is that state.
 */
describe('database watch', () => {
  let servers: RestartableServers;
  beforeAll(async () => {
    servers = await startRestartableServers();
  }, 60_000);
  afterAll(async () => {
    await servers?.destroy();
  });

  async function stalledClientAfterRestart() {
    const client = await connectMongo(servers.mongodbUri, { serverSelectionTimeoutMs: 500 });
    const coll = client.db('watch').collection('docs');
    await coll.insertOne({ n: 1 });
    await servers.stopMongo();
    await expect(coll.findOne({})).rejects.toThrow();
    // The monitor of the (only) server stops checking, as it did in CI.
    const [server] = (client as any).topology.s.servers.values();
    server.monitor.monitorId.stop();
    await servers.startMongo();
    return { client, coll };
  }

  async function readableWithin(coll: { findOne(f: object): Promise<unknown> }, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (
        await coll.findOne({}).then(
          () => true,
          () => false,
        )
      )
        return true;
      await new Promise((r) => setTimeout(r, 200));
    }
    return false;
  }

  test('without the watch a stalled monitor keeps the client unavailable after the database is back', async () => {
    const { client, coll } = await stalledClientAfterRestart();
    try {
      expect(await readableWithin(coll, 4_000)).toBe(false);
    } finally {
      await client.close();
    }
  }, 60_000);

  test('with it, the client reconnects by itself and says why; the same collection object reads again', async () => {
    const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
    const log = {
      warn: (fields: Record<string, unknown>, msg: string) => void lines.push({ level: 'warn', msg, fields }),
      info: (fields: Record<string, unknown>, msg: string) => void lines.push({ level: 'info', msg, fields }),
      error: (fields: Record<string, unknown>, msg: string) => void lines.push({ level: 'error', msg, fields }),
    };
    const client = await connectMongo(servers.mongodbUri, { serverSelectionTimeoutMs: 500 });
    const watch = watchDatabase(client, { heartbeatFrequencyMs: 1_000, stallMs: 2_000, log });
    try {
      const coll = client.db('watch').collection('docs');
      await servers.stopMongo();
      await expect(coll.findOne({})).rejects.toThrow();
      const [server] = (client as any).topology.s.servers.values();
      server.monitor.monitorId.stop();
      await servers.startMongo();
      expect(await readableWithin(coll, 10_000)).toBe(true);
      expect(await coll.findOne({ n: 1 })).toMatchObject({ n: 1 });
      expect(lines.map((l) => l.msg)).toEqual(
        expect.arrayContaining(['database unreachable', 'database monitor stalled: reconnecting the client', 'database reachable again']),
      );
    } finally {
      watch.stop();
      await client.close();
    }
  }, 60_000);
});
