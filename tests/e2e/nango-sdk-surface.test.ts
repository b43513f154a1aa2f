import { Nango } from '@nangohq/node';
import { LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { recordFilters, selectsByIdOnly } from '../support/command-filters';
import { startWebhookReceiver, type ReceivedWebhook } from '../support/webhook-receiver';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';
import { sdk, sdkError } from '../support/nango-sdk-calls';

/**
 * The rest of the app-facing surface of Nango's Node SDK (`@nangohq/node`, unmodified) against
 * a running Weft: listing connections by tags, end user and integration, page by page; the
 * provider catalog; webhooks verified with `verifyIncomingWebhookRequest`; reconnect sessions.
 * Setup goes through Weft's API; each call under test goes through the SDK, and each checks
 * what came back against what was stored, not only that the call succeeded.
 */
describe('Nango Node SDK: connections by tag, providers, webhook verification, reconnect sessions', () => {
  let stack: WeftStack;
  let nango: Nango;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let signingKey: string;

  /** Connection id → its tags, created in this order (so newest first is the reverse). */
  const seeded: Array<[string, string, Record<string, string>]> = [
    ['luma', 'a1', { end_user_id: 'u1', team: 'red' }],
    ['luma', 'a2', { end_user_id: 'u2', team: 'red', organization_id: 'org-1' }],
    ['luma', 'a3', { end_user_id: 'u1', team: 'blue', organization_id: 'org-1' }],
    ['luma-eu', 'b1', { end_user_id: 'u1', team: 'red', Plan: 'gold' }],
    ['luma-eu', 'b2', {}],
  ];

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    stack = await startWeftStack({ luma: { seed: 5, eventCount: 5 }, egressAllow: { webhooks: [receiver.url] }, monitorCommands: true });
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: receiver.url } })).status).toBe(200);
    const rotated = await stack.api('POST', '/environment/webhook-signing-key/rotate');
    expect(rotated.status).toBe(200);
    signingKey = rotated.body.data.webhook_signing_key;
    await createLumaIntegration(stack);
    await createLumaIntegration(stack, { unique_key: 'luma-eu' });
    for (const [integration, id, tags] of seeded) {
      const res = await stack.api('POST', '/connections', {
        body: { provider_config_key: integration, connection_id: id, credentials: { type: 'API_KEY', apiKey: LUMA_DEFAULT_API_KEY }, tags },
      });
      expect(res.status).toBe(201);
    }
    nango = new Nango({ secretKey: stack.keys.dev, host: stack.apiUrl });
  });
  afterAll(async () => {
    await stack?.shutdown();
    await receiver?.close();
  });

  /** The connection ids of a listing, in its order. */
  async function ids(call: Promise<{ connections: Array<{ connection_id: string }> }>): Promise<string[]> {
    return (await sdk(call)).connections.map((c) => c.connection_id);
  }

  describe('listConnections', () => {
    test('by tags (every one must match, keys without regard to case), by end user, by integration, and together', async () => {
      expect(await ids(nango.listConnections({ tags: { team: 'red' } }))).toEqual(['b1', 'a2', 'a1']);
      expect(await ids(nango.listConnections({ tags: { team: 'red', end_user_id: 'u1' } }))).toEqual(['b1', 'a1']);
      // The SDK sends `tags[plan]`; the connection's key is `Plan`.
      expect(await ids(nango.listConnections({ tags: { Plan: 'gold' } }))).toEqual(['b1']);
      expect(await ids(nango.listConnections({ tags: { team: 'green' } }))).toEqual([]);
      expect(await ids(nango.listConnections({ userId: 'u1' }))).toEqual(['b1', 'a3', 'a1']);
      expect(await ids(nango.listConnections(undefined, undefined, { endUserOrganizationId: 'org-1' }))).toEqual(['a3', 'a2']);
      expect(await ids(nango.listConnections({ integrationId: 'luma-eu' }))).toEqual(['b2', 'b1']);
      expect(await ids(nango.listConnections({ integrationId: ['luma', 'luma-eu'], tags: { team: 'red' } }))).toEqual(['b1', 'a2', 'a1']);
      expect(await ids(nango.listConnections({ integrationId: 'luma', userId: 'u1' }))).toEqual(['a3', 'a1']);
      expect(await ids(nango.listConnections({ connectionId: 'a1', tags: { team: 'red' } }))).toEqual(['a1']);
      expect(await ids(nango.listConnections({ connectionId: 'a1', tags: { team: 'blue' } }))).toEqual([]);
      // Without filters: every connection.
      expect((await ids(nango.listConnections())).sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2']);

      const [b1] = (await sdk(nango.listConnections({ tags: { Plan: 'gold' } }))).connections;
      expect(b1).toMatchObject({
        connection_id: 'b1',
        provider_config_key: 'luma-eu',
        provider: 'luma',
        tags: { end_user_id: 'u1', team: 'red', Plan: 'gold' },
        end_user: { id: 'u1', email: null, display_name: null, organization: null },
      });
    });

    test('limit and page walk a filtered list in order, each connection once', async () => {
      const pages = [];
      for (let page = 0; page < 4; page += 1) pages.push(await ids(nango.listConnections(paged({ userId: 'u1', limit: 1 }, page))));
      expect(pages).toEqual([['b1'], ['a3'], ['a1'], []]);
      expect(await ids(nango.listConnections({ tags: { team: 'red' }, limit: 2 }))).toEqual(['b1', 'a2']);
      expect(await ids(nango.listConnections(paged({ tags: { team: 'red' }, limit: 2 }, 1)))).toEqual(['a1']);
      expect(await ids(nango.listConnections(paged({ integrationId: 'luma', limit: 2 }, 1)))).toEqual(['a1']);
      expect(await ids(nango.listConnections(paged({ integrationId: ['luma', 'luma-eu'], limit: 2 }, 1)))).toEqual(['a3', 'a2']);
      // The older signature's queries: end user, limit and page.
      expect(await ids(nango.listConnections(undefined, undefined, { endUserId: 'u1', limit: 2, page: 1 }))).toEqual(['a1']);
    });

    test('filters read by _id only: the scopes are key ranges, the connections read by _id', async () => {
      const rec = recordFilters(stack.core.mongo);
      try {
        await sdk(nango.listConnections({ tags: { team: 'red', end_user_id: 'u1' } }));
        await sdk(nango.listConnections(paged({ integrationId: ['luma', 'luma-eu'], limit: 2 }, 1)));
        await sdk(nango.listConnections({ userId: 'u2' }));
      } finally {
        rec.stop();
      }
      const relevant = rec.commands.filter((c) => c.collection === 'connections' || c.collection === 'connection_list_keys');
      expect(relevant.some((c) => c.collection === 'connection_list_keys')).toBe(true);
      expect(relevant.filter((c) => !selectsByIdOnly(c.filter)).map((c) => `${c.command} ${c.collection} ${JSON.stringify(c.filter)}`)).toEqual([]);
    });

    test('changed tags are found by their new values only; a deleted connection by none', async () => {
      await sdk(nango.patchConnection({ connectionId: 'a2', provider_config_key: 'luma' }, { tags: { end_user_id: 'u2', team: 'green' } }));
      expect(await ids(nango.listConnections({ tags: { team: 'red' } }))).toEqual(['b1', 'a1']);
      expect(await ids(nango.listConnections({ tags: { team: 'green' } }))).toEqual(['a2']);
      expect(await ids(nango.listConnections({ userId: 'u2' }))).toEqual(['a2']);

      await sdk(nango.deleteConnection('luma-eu', 'b2'));
      expect(await ids(nango.listConnections({ integrationId: 'luma-eu' }))).toEqual(['b1']);
    });

    test('a malformed filter is refused with invalid_query_params', async () => {
      for (const query of ['tags=red', 'tags[a][b]=c', 'tags[$x]=1', `endUserId=`, 'limit=0']) {
        const res = await stack.api('GET', `/connections?${query}`);
        expect([query, res.status, res.body.error?.code]).toEqual([query, 400, 'invalid_query_params']);
      }
    });
  });

  describe('providers', () => {
    test('listProviders and getProvider: the catalog from the integration folders', async () => {
      const { data } = await sdk(nango.listProviders({}));
      expect(data.map((p) => p.name)).toEqual(['github', 'luma', 'one-drive']);
      const luma = data.find((p) => p.name === 'luma') as unknown as Record<string, unknown>;
      // integrations/luma/provider.ts
      expect(luma).toEqual({
        name: 'luma',
        display_name: 'Luma',
        auth_mode: 'API_KEY',
        auth_modes: ['API_KEY'],
        categories: ['events'],
        docs: 'https://docs.luma.com/reference',
        default_scopes: [],
        authorization_url: null,
        token_url: null,
        proxy: { base_url: 'https://api.lu.ma' },
        webhooks: { kind: 'secret-path' },
      });

      // integrations/github/provider.ts: two auth modes, OAuth scopes, signed webhooks.
      expect((await sdk(nango.getProvider({ provider: 'github' }))).data).toMatchObject({
        name: 'github',
        display_name: 'GitHub',
        auth_mode: 'APP',
        auth_modes: ['APP', 'OAUTH2'],
        categories: ['dev-tools'],
        docs: 'https://docs.github.com/en/rest',
        default_scopes: ['repo', 'read:user'],
        authorization_url: 'https://github.com/login/oauth/authorize',
        webhooks: { kind: 'signed' },
      });
      expect((await sdk(nango.getProvider({ provider: 'one-drive' }))).data).toMatchObject({
        display_name: 'OneDrive (Microsoft Graph)',
        default_scopes: ['offline_access', 'Files.Read.All', 'User.Read'],
        webhooks: { kind: 'subscription-notifications' },
      });

      expect((await sdk(nango.listProviders({ search: 'GIT' }))).data.map((p) => p.name)).toEqual(['github']);
      await expect(sdkError(nango.getProvider({ provider: 'salesforce' }))).resolves.toEqual([404, 'unknown_provider']);
      expect((await stack.api('GET', '/providers', { key: null })).status).toBe(401);
    });
  });

  describe('webhooks', () => {
    test('each delivery verifies with verifyIncomingWebhookRequest and the signing key; a tampered body does not', async () => {
      const res = await stack.api('POST', '/connections', {
        body: { provider_config_key: 'luma', connection_id: 'hooked', credentials: { type: 'API_KEY', apiKey: LUMA_DEFAULT_API_KEY } },
      });
      expect(res.status).toBe(201);
      const delivery = await receiver.waitFor((w) => w.body?.type === 'auth' && w.body.connectionId === 'hooked', 30_000);
      const headers = stringHeaders(delivery);
      expect(headers['x-nango-hmac-sha256']).toMatch(/^[0-9a-f]{64}$/);

      // The app's own client, given the signing key as its webhook signing key; or a client holding only the signing key.
      const app = new Nango({ secretKey: stack.keys.dev, host: stack.apiUrl, webhookSigningKey: signingKey });
      expect(app.verifyIncomingWebhookRequest(delivery.raw, headers)).toBe(true);
      expect(new Nango({ secretKey: signingKey, host: stack.apiUrl }).verifyIncomingWebhookRequest(delivery.raw, headers)).toBe(true);

      expect(app.verifyIncomingWebhookRequest(delivery.raw.replace('"success":true', '"success":false'), headers)).toBe(false);
      expect(app.verifyIncomingWebhookRequest(`${delivery.raw} `, headers)).toBe(false);
      const { 'x-nango-hmac-sha256': _dropped, ...unsigned } = headers;
      expect(app.verifyIncomingWebhookRequest(delivery.raw, unsigned)).toBe(false);
      // The secret key is not the signing key.
      expect(nango.verifyIncomingWebhookRequest(delivery.raw, headers)).toBe(false);
      // The signing key reaches no log line.
      expect(stack.logs.join('\n')).not.toContain(signingKey.slice('whsec_'.length));
    });
  });

  describe('connect sessions', () => {
    test('a session’s end_user and organization are kept on the connection it creates as tags, beside its own tags', async () => {
      const { data } = await sdk(
        nango.createConnectSession({
          end_user: { id: 'u9', email: 'u9@example.com', display_name: 'User Nine' },
          organization: { id: 'org-9' },
          tags: { team: 'purple' },
          allowed_integrations: ['luma'],
        }),
      );
      const res = await fetch(`${stack.apiUrl}/api-auth/api-key/luma?connect_session_token=${data.token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiKey: LUMA_DEFAULT_API_KEY }),
      });
      expect(res.status).toBe(201);
      const connectionId = ((await res.json()) as { data: { connection_id: string } }).data.connection_id;

      const tags = { end_user_id: 'u9', end_user_email: 'u9@example.com', end_user_display_name: 'User Nine', organization_id: 'org-9', team: 'purple' };
      expect((await sdk(nango.getConnection('luma', connectionId))).tags).toEqual(tags);
      const listed = await sdk(nango.listConnections({ userId: 'u9' }));
      expect(listed.connections.map((c) => c.connection_id)).toEqual([connectionId]);
      expect(listed.connections[0]).toMatchObject({
        tags,
        end_user: { id: 'u9', email: 'u9@example.com', display_name: 'User Nine', organization: { id: 'org-9', display_name: null } },
      });
    });

    test('createReconnectSession: a reconnect session for that connection, whose flow re-authorizes it and creates nothing', async () => {
      const { data } = await sdk(nango.createReconnectSession({ connection_id: 'a1', integration_id: 'luma', end_user: { id: 'u1' } }));
      expect(data.connect_link).toBe(`${stack.apiUrl}/connect?session_token=${data.token}`);
      const session = await stack.core.stores.connectSessions.find(data.token);
      expect(session).toMatchObject({ connection_id: 'a1', allowed_integrations: ['luma'], end_user: { id: 'u1' } });

      const before = await stack.core.stores.connections.find({ environment: 'dev', providerConfigKey: 'luma', connectionId: 'a1' });
      const count = (await sdk(nango.listConnections({ integrationId: 'luma' }))).connections.length;
      const res = await fetch(`${stack.apiUrl}/api-auth/api-key/luma?connect_session_token=${data.token}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiKey: LUMA_DEFAULT_API_KEY }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data: { connection_id: string } }).data.connection_id).toBe('a1');
      const after = await stack.core.stores.connections.find({ environment: 'dev', providerConfigKey: 'luma', connectionId: 'a1' });
      expect(after!._id).toBe(before!._id);
      expect(after!.updated_at.getTime()).toBeGreaterThan(before!.updated_at.getTime());
      expect((await sdk(nango.listConnections({ integrationId: 'luma' }))).connections).toHaveLength(count);
      await receiver.waitFor((w) => w.body?.type === 'auth' && w.body.connectionId === 'a1' && w.body.operation === 'override' && w.body.success, 30_000);
    });

    test('createReconnectSession refuses an unknown connection or integration, and a malformed body, storing no session', async () => {
      const sessions = () => stack.core.stores.db.collection('connect_sessions').countDocuments();
      const before = await sessions();
      await expect(sdkError(nango.createReconnectSession({ connection_id: 'nobody', integration_id: 'luma' }))).resolves.toEqual([404, 'unknown_connection']);
      // b1 is in luma-eu, not in luma.
      await expect(sdkError(nango.createReconnectSession({ connection_id: 'b1', integration_id: 'luma' }))).resolves.toEqual([404, 'unknown_connection']);
      await expect(sdkError(nango.createReconnectSession({ connection_id: 'a1', integration_id: 'nowhere' }))).resolves.toEqual([
        400,
        'unknown_provider_config',
      ]);
      await expect(sdkError(nango.createReconnectSession({ connection_id: 'a1' } as never))).resolves.toEqual([400, 'invalid_body']);
      await expect(
        sdkError(nango.createReconnectSession({ connection_id: 'a1', integration_id: 'luma', end_user: { id: 'u1', email: 'not an email' } })),
      ).resolves.toEqual([400, 'invalid_body']);
      expect(await sessions()).toBe(before);
    });
  });
});

type ListParams = Exclude<Parameters<Nango['listConnections']>[0], string | undefined>;

/** The SDK's object form sends `page` too (its code reads it), though its type leaves it out. */
function paged(params: ListParams, page: number): ListParams {
  return { ...params, page } as ListParams;
}

/** A delivery's headers as the SDK takes them (one string each). */
function stringHeaders(w: ReceivedWebhook): Record<string, string> {
  return Object.fromEntries(Object.entries(w.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
}
