import { randomUUID } from 'node:crypto';
import { sealedAt } from '../../auth/credential-cipher';
import { rebuildTallies } from '../../store/integration-tallies';
import { startWeftStack, type WeftStack } from '../support/weft-stack';

/** The integration status's tallies on real FerretDB: concurrent first writes, and a rebuild that repairs. */
describe('integration tallies', () => {
  let stack: WeftStack;
  beforeAll(async () => {
    stack = await startWeftStack({ worker: false });
  });
  afterAll(async () => stack?.shutdown());

  function create(integration: string, connectionId: string) {
    const _id = randomUUID();
    return stack.core.stores.connections.create({
      _id,
      environment: 'dev',
      provider_config_key: integration,
      provider: 'luma',
      connection_id: connectionId,
      auth_mode: 'API_KEY',
      credentials_encrypted: stack.core.cipher.seal({ type: 'API_KEY', apiKey: 'k' }, sealedAt.connectionCredentials({ _id, environment: 'dev' })),
      connection_config: {},
      metadata: {},
      tags: {},
    });
  }

  test('connections made at once in a new integration are all counted (racing first writes of a shard are retried)', async () => {
    await Promise.all(Array.from({ length: 40 }, (_, i) => create('fresh', `c-${i}`)));
    expect((await stack.core.stores.tallies.read('dev', 'fresh')).connections).toHaveLength(40);
  });

  test('a rebuild restores a lost entry and removes one whose connection is gone', async () => {
    const kept = await create('repair', 'kept');
    const gone = await create('repair', 'gone');
    const tallies = stack.core.stores.db.collection('integration_tallies');
    // As a process that died between its writes would leave them: one entry missing, one naming nothing.
    await stack.core.stores.tallies.removeConnection(kept, kept._id);
    await stack.core.stores.db.collection('connections').deleteOne({ _id: gone._id as never });
    expect((await stack.core.stores.tallies.read('dev', 'repair')).connections.map((c) => c.id)).toEqual([gone._id]);
    const report = await rebuildTallies(stack.core.stores.db, stack.core.stores.tallies);
    expect(report.removed).toBe(1);
    expect((await stack.core.stores.tallies.read('dev', 'repair')).connections.map((c) => c.id)).toEqual([kept._id]);
    expect(await tallies.countDocuments({})).toBeGreaterThan(0);
  });
});
