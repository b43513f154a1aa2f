import { appendFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { infraOptionsFromEnv } from '../../scripts/infra/infra-env';
import { startInfrastructure } from '../../scripts/infra/infrastructure';
import { prepareTestRun } from './prepare-test-run';

/**
 * Jest globalSetup: one Temporal dev server and one FerretDB per test run, on free ports,
 * shared by every suite. Test files find them through process.env (jest workers are forked
 * after this runs, so they inherit it). TEMPORAL_ADDRESS / MONGODB_URI point the run at
 * existing servers instead.
 */

/** globalSetup and globalTeardown share only globalThis; the handle travels there. */
export const INFRA_HANDLE_KEY = '__weftTestInfrastructure';

export const TEST_ENV = {
  temporalAddress: 'WEFT_TEST_TEMPORAL_ADDRESS',
  temporalNamespace: 'WEFT_TEST_TEMPORAL_NAMESPACE',
  /** The dev server's warnings and errors, so a stalled test can say what the server saw. */
  temporalLog: 'WEFT_TEST_TEMPORAL_LOG',
  mongodbUri: 'WEFT_TEST_MONGODB_URI',
} as const;

export default async function globalSetup(): Promise<void> {
  const fromEnv = infraOptionsFromEnv();
  // Per-server "ready" lines are folded into the one summary below; the rest (a binary being
  // built for minutes, a lock being waited on, a skipped binary) is worth seeing as it happens.
  const log = (msg: string) => {
    if (!/ ready at /.test(msg)) process.stderr.write(`[weft infra] ${msg}\n`);
  };
  const temporalLog = path.join(mkdtempSync(path.join(os.tmpdir(), 'weft-test-temporal-')), 'server.log');
  const infra = await startInfrastructure({
    mode: 'test',
    repoRoot: path.resolve(__dirname, '..', '..'),
    external: fromEnv.external,
    binaries: fromEnv.binaries,
    log,
    onServerOutput: (server, chunk) => {
      if (server === 'temporal') appendFileSync(temporalLog, chunk);
    },
  });
  (globalThis as Record<string, unknown>)[INFRA_HANDLE_KEY] = infra;

  process.env[TEST_ENV.temporalAddress] = infra.temporal.address;
  process.env[TEST_ENV.temporalNamespace] = infra.temporal.namespace;
  process.env[TEST_ENV.mongodbUri] = infra.mongodbUri;
  process.env[TEST_ENV.temporalLog] = temporalLog;

  try {
    await prepareTestRun();
  } catch (err) {
    await infra.stop();
    throw err;
  }

  const seconds = (ms?: number) => (ms === undefined ? 'external' : `${(ms / 1000).toFixed(1)} s`);
  process.stderr.write(
    `\n[weft infra] temporal ${infra.temporal.address} ns=${infra.temporal.namespace} (${infra.temporal.startedHere ? 'dev server' : 'external'}, ${seconds(infra.readyInMs.temporal)}) · ` +
      `mongodb ${infra.mongodbUri} (${infra.mongodbStartedHere ? 'ferretdb' : 'external'}, ${seconds(infra.readyInMs.ferretdb)})\n`,
  );
}
