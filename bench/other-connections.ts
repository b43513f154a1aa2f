import { randomUUID } from 'node:crypto';
import { sealedAt } from '../auth/credential-cipher';
import type { Credentials } from '../auth/credentials';
import type { ConnectionDoc } from '../store/connections';
import type { WeftStack } from '../tests/support/weft-stack';

/** Seeding requests in flight at once. */
const CONCURRENCY = 16;

export interface OtherConnections {
  connectionIds: string[];
  records: number;
  ms: number;
}

/**
 * `count` more connections of the drive's integration, each with `recordsEach` records of
 * the same model, so reads of the big drive share the database with many others. Written
 * as the API and a sync write them (the connection store with sealed credentials, a record
 * writer run), but without an HTTP connect flow and a Temporal run each: ten thousand of
 * those would take longer than the figures themselves. Sync states are left out: no read
 * measured here touches them, and creating each is a scan on FerretDB today.
 */
export async function seedOtherConnections(
  stack: WeftStack,
  like: ConnectionDoc,
  model: string,
  count: number,
  recordsEach: number,
): Promise<OtherConnections> {
  const { stores, cipher } = stack.core;
  const connectionIds = Array.from({ length: count }, (_, i) => `other-${i}-${randomUUID().slice(0, 8)}`);
  const t0 = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        const _id = randomUUID();
        const credentials: Credentials = { type: 'OAUTH2', access_token: `seeded-token-${i}` };
        const connection = await stores.connections.create({
          _id,
          environment: like.environment,
          provider_config_key: like.provider_config_key,
          provider: like.provider,
          connection_id: connectionIds[i],
          auth_mode: 'OAUTH2',
          credentials_encrypted: cipher.seal(credentials, sealedAt.connectionCredentials({ _id, environment: like.environment })),
          connection_config: {},
          metadata: {},
          tags: {},
        });
        const scope = { environment: connection.environment, connection: connection._id, model, variant: 'base' };
        const runId = `seed-${i}`;
        const writer = await stores.records.openWriter(scope, runId);
        await writer.saveBatch(
          Array.from({ length: recordsEach }, (_, r) => ({
            id: `${connectionIds[i]}-file-${r}`,
            data: { id: `${connectionIds[i]}-file-${r}`, name: `file-${r}.txt`, size: 1000 + r },
          })),
        );
        await stores.records.finishScope(scope, runId, false);
        if ((i + 1) % 1000 === 0) process.stderr.write(`seeded ${i + 1} connections in ${Math.round(Number(process.hrtime.bigint() - t0) / 1e6)} ms\n`);
      }
    }),
  );
  return { connectionIds, records: count * recordsEach, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}
