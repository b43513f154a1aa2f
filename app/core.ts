import type { MongoClient } from 'mongodb';
import { CredentialCipher } from '../auth/credential-cipher';
import { integrations } from '../integrations';
import { IntegrationRegistry } from '../runtime/registry';
import { connectMongo, createStores, DATABASE_HEARTBEAT_MS, ensureIndexes, type Stores } from '../store/db';
import { watchDatabase, type DatabaseWatchLog } from '../store/database-watch';
import type { ExpiryRule } from '../store/ttl';
import { WeftError } from '../common/errors';

/** What both the API and the workers stand on: the database, the cipher, the integrations. */
export interface Core {
  mongo: MongoClient;
  stores: Stores;
  cipher: CredentialCipher;
  registry: IntegrationRegistry;
  /** Retention the database cannot enforce itself; the worker sweeps these. */
  manualExpiry: ExpiryRule[];
  close(): Promise<void>;
}

export async function openCore(opts: { mongodbUri: string; dbName: string; encryptionKey: string; requestLogTtlDays: number; serverSelectionTimeoutMs?: number; log?: DatabaseWatchLog; monitorCommands?: boolean }): Promise<Core> {
  if (!opts.encryptionKey) throw new WeftError('missing_encryption_key', 'WEFT_ENCRYPTION_KEY is required to store credentials.');
  const cipher = new CredentialCipher(opts.encryptionKey);
  const mongo = await connectMongo(opts.mongodbUri, { serverSelectionTimeoutMs: opts.serverSelectionTimeoutMs, monitorCommands: opts.monitorCommands });
  const stores = createStores(mongo.db(opts.dbName), { requestLogTtlDays: opts.requestLogTtlDays });
  const manualExpiry = await ensureIndexes(stores);
  // A long-running process (API, worker) is watched; a one-shot command is not.
  const watch = opts.log ? watchDatabase(mongo, { heartbeatFrequencyMs: DATABASE_HEARTBEAT_MS, log: opts.log }) : null;
  return {
    manualExpiry,
    mongo,
    stores,
    cipher,
    registry: new IntegrationRegistry(integrations),
    close: async () => {
      watch?.stop();
      await mongo.close();
    },
  };
}
