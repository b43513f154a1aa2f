import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { resolveBinary } from '../../scripts/infra/binaries';
import { loadDevConfig } from '../../scripts/infra/dev-config';
import { startFerretDB, type FerretDBServer } from '../../scripts/infra/ferretdb-server';
import { getFreePorts } from '../../scripts/infra/free-port';
import { infraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { startTemporalDevServer, type TemporalDevServer } from '../../scripts/infra/temporal-dev-server';

/**
 * A FerretDB and a Temporal dev server of one test file's own, which it may stop and start
 * again: same ports, same data (FerretDB's directory, Temporal's SQLite file), as an
 * operator's restart would. The shared servers of the test run are never touched.
 */
export interface RestartableServers {
  mongodbUri: string;
  temporalAddress: string;
  stopMongo(): Promise<void>;
  startMongo(): Promise<void>;
  stopTemporal(): Promise<void>;
  startTemporal(): Promise<void>;
  /** Stops whatever runs and removes the data. */
  destroy(): Promise<void>;
}

export async function startRestartableServers(): Promise<RestartableServers> {
  const repoRoot = path.resolve(__dirname, '..', '..');
  const { binaries } = infraOptionsFromEnv();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'weft-outage-'));
  const [mongoPort, debugPort, temporalPort] = await getFreePorts(3);
  const [ferretdbBinary, temporalBinary, devConfig] = await Promise.all([
    resolveBinary('ferretdb', { explicitPath: binaries.ferretdb, cacheDir: binaries.cacheDir }),
    resolveBinary('temporal', { explicitPath: binaries.temporal, cacheDir: binaries.cacheDir }),
    loadDevConfig(repoRoot),
  ]);
  const ferretdbOptions = {
    binary: ferretdbBinary,
    port: mongoPort,
    debugPort,
    dataDir: path.join(dir, 'ferretdb', 'data'),
    stateDir: path.join(dir, 'ferretdb', 'state'),
    logLevel: 'error',
  };
  const temporalOptions = {
    binary: temporalBinary,
    port: temporalPort,
    uiPort: null,
    dbFile: path.join(dir, 'temporal.sqlite'),
    namespace: 'default',
    searchAttributes: devConfig.searchAttributes,
    logLevel: 'error',
  };
  let mongo: FerretDBServer | null = null;
  let temporal: TemporalDevServer | null = null;
  const servers: RestartableServers = {
    mongodbUri: `mongodb://127.0.0.1:${mongoPort}/`,
    temporalAddress: `127.0.0.1:${temporalPort}`,
    async startMongo() {
      if (mongo) return;
      // A new debug port each start: the stopped server's must not be in the way.
      const [freshDebugPort] = await getFreePorts(1);
      const started = await startFerretDB({ ...ferretdbOptions, debugPort: freshDebugPort });
      mongo = started;
      // A restarted server that dies on its own would look like an outage that never ends:
      // say so, with its output, instead of leaving a test to time out on 503s.
      void started.exited.then((exit) => {
        if (mongo === started) console.error(`outage test: the restarted FerretDB exited by itself (${JSON.stringify(exit)}):\n${started.recentOutput()}`);
      });
    },
    async stopMongo() {
      const running = mongo;
      mongo = null;
      await running?.stop();
    },
    async startTemporal() {
      temporal ??= await startTemporalDevServer(temporalOptions);
    },
    async stopTemporal() {
      await temporal?.stop();
      temporal = null;
    },
    async destroy() {
      await Promise.all([servers.stopMongo(), servers.stopTemporal()]);
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all([servers.startMongo(), servers.startTemporal()]);
  } catch (err) {
    await servers.destroy();
    throw err;
  }
  return servers;
}
