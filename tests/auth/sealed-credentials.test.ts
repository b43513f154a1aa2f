import { sealedAt } from '../../auth/credential-cipher';
import { LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { resealWithCurrentKey } from '../../store/reseal';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { sealV1 } from './legacy-seal';

/**
 * Through the API: every place Weft seals and opens a secret uses the same binding, a value
 * moved to another document no longer opens, and the stored values of an older Weft keep
 * working before and after the re-seal.
 */
describe('sealed credentials bound to their documents', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    stack = await startWeftStack({ worker: false });
    await createLumaIntegration(stack);
    for (const id of ['alice', 'bob']) {
      const res = await stack.api('POST', '/connections', {
        body: { provider_config_key: 'luma', connection_id: id, credentials: { type: 'API_KEY', apiKey: LUMA_DEFAULT_API_KEY } },
      });
      expect(res.status).toBe(201);
    }
    for (const [key, secret] of [
      ['drive-a', 'secret-a'],
      ['drive-b', 'secret-b'],
    ]) {
      const res = await stack.api('POST', '/integrations', {
        body: { unique_key: key, provider: 'one-drive', credentials: { type: 'OAUTH2', client_id: `client-${key}`, client_secret: secret } },
      });
      expect(res.status).toBe(201);
    }
  });
  afterAll(async () => {
    await stack?.shutdown();
  });

  const connections = () => stack.core.stores.db.collection<any>('connections');
  const integrations = () => stack.core.stores.db.collection<any>('integrations');
  /** drive-b's own sealed secret, put back once the test that breaks it is done with it. */
  let brokenDriveB: string;
  const connectionDoc = (id: string) => connections().findOne({ connection_id: id, provider_config_key: 'luma' });

  test('a connection whose sealed credentials were copied from another connection does not open', async () => {
    expect((await stack.api('GET', '/connections/bob?provider_config_key=luma')).body.credentials).toMatchObject({
      type: 'API_KEY',
      apiKey: LUMA_DEFAULT_API_KEY,
    });
    const alice = await connectionDoc('alice');
    const bob = await connectionDoc('bob');
    await connections().updateOne({ _id: bob._id }, { $set: { credentials_encrypted: alice.credentials_encrypted } });
    try {
      const res = await stack.api('GET', '/connections/bob?provider_config_key=luma');
      expect(res.body.error.code).toBe('credentials_unreadable');
      expect(JSON.stringify(res.body)).not.toContain(LUMA_DEFAULT_API_KEY);
    } finally {
      await connections().updateOne({ _id: bob._id }, { $set: { credentials_encrypted: bob.credentials_encrypted } });
    }
    expect((await stack.api('GET', '/connections/bob?provider_config_key=luma')).status).toBe(200);
  });

  test("an integration holding another integration's sealed client secret does not open it", async () => {
    const a = await integrations().findOne({ unique_key: 'drive-a' });
    brokenDriveB = (await integrations().findOne({ unique_key: 'drive-b' })).credentials_encrypted;
    expect((await stack.api('GET', '/integrations/drive-b?include=credentials')).body.data.credentials.client_secret).toBe('secret-b');
    await integrations().updateOne({ unique_key: 'drive-b' }, { $set: { credentials_encrypted: a.credentials_encrypted } });
    const res = await stack.api('GET', '/integrations/drive-b?include=credentials');
    expect(res.body.error.code).toBe('credentials_unreadable');
    expect(JSON.stringify(res.body)).not.toContain('secret-a');
  });

  test('credentials stored by an older Weft (v1) are read as before, and after the re-seal they are bound', async () => {
    const alice = await connectionDoc('alice');
    const legacy = sealV1(stack.env.WEFT_ENCRYPTION_KEY, { type: 'API_KEY', apiKey: 'from-an-older-weft' });
    await connections().updateOne({ _id: alice._id }, { $set: { credentials_encrypted: legacy } });
    expect((await stack.api('GET', '/connections/alice?provider_config_key=luma')).body.credentials).toMatchObject({
      type: 'API_KEY',
      apiKey: 'from-an-older-weft',
    });

    await resealWithCurrentKey(stack.core.stores.db, stack.core.cipher).catch(() => undefined); // drive-b was left broken above
    const migrated = (await connectionDoc('alice')).credentials_encrypted;
    expect(migrated).toMatch(/^v3\./);
    expect(stack.core.cipher.open(migrated, sealedAt.connectionCredentials(alice))).toEqual({ type: 'API_KEY', apiKey: 'from-an-older-weft' });
    expect((await stack.api('GET', '/connections/alice?provider_config_key=luma')).body.credentials).toMatchObject({
      type: 'API_KEY',
      apiKey: 'from-an-older-weft',
    });
  });

  test('once a re-seal pass leaves no v1 value, a v1 value planted later (an old backup) is refused', async () => {
    // With drive-b readable again the pass completes: nothing unbound is left.
    await integrations().updateOne({ unique_key: 'drive-b' }, { $set: { credentials_encrypted: brokenDriveB } });
    await resealWithCurrentKey(stack.core.stores.db, stack.core.cipher);
    const alice = await connectionDoc('alice');
    const fromBackup = sealV1(stack.env.WEFT_ENCRYPTION_KEY, { type: 'API_KEY', apiKey: 'from-a-backup' });
    await connections().updateOne({ _id: alice._id }, { $set: { credentials_encrypted: fromBackup } });
    const res = await stack.api('GET', '/connections/alice?provider_config_key=luma');
    expect(res.body.error.code).toBe('credentials_unreadable');
    expect(JSON.stringify(res.body)).not.toContain('from-a-backup');
  });
});
