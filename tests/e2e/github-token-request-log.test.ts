import { connectGitHub, createGitHubIntegration, startWeftStack, type WeftStack, waitForLogs } from '../support/weft-stack';

/** A GitHub App connection's installation-token mint is an `auth:token` entry of `GET /logs`, like a token endpoint call. */
describe('GitHub installation tokens in the request log', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    stack = await startWeftStack({
      github: { seed: 5, installations: [{ id: 1001, account: { login: 'acme', type: 'Organization' }, repositoryCount: 2 }], pullsPerRepo: 2 },
    });
    await createGitHubIntegration(stack);
  });
  afterAll(async () => stack?.shutdown());

  const logsOf = (query: string, n: number) => waitForLogs(stack, query, n);

  test('installation-token mints are auth:token entries, and every request the simulator received is one entry', async () => {
    stack.github.resetStats();
    expect((await connectGitHub(stack, 'gh-1')).status).toBe(201);
    await stack.waitForSync('gh-1', 'repositories', { providerConfigKey: 'github' });
    await stack.waitForSync('gh-1', 'pull-requests', { providerConfigKey: 'github' });

    const received = stack.github.requestLog();
    const entries = await logsOf('connection_id=gh-1&limit=1000', received.length);
    expect(entries).toHaveLength(received.length);

    const mints = received.filter((e) => e.path === '/app/installations/1001/access_tokens');
    expect(mints.length).toBeGreaterThanOrEqual(1);
    const minted = await logsOf('connection_id=gh-1&operation=auth%3Atoken', mints.length);
    expect(minted).toHaveLength(mints.length);
    expect(minted[minted.length - 1]).toMatchObject({ method: 'POST', status: 201, integration: 'github', run_id: null });
    expect(minted[minted.length - 1].url).toBe(`${stack.github.url}/app/installations/1001/access_tokens`);
    // The oldest entry is that first mint, before the check of the new credentials.
    expect(entries[entries.length - 1].operation).toBe('auth:token');
    expect(entries.filter((e) => e.operation === 'auth').length).toBeGreaterThanOrEqual(1);

    // Neither the App's JWT nor the installation token is anywhere in the log.
    const text = JSON.stringify(await stack.core.stores.db.collection('request_logs').find({}).toArray());
    expect(text).not.toMatch(/ghs_|eyJ|authorization|bearer/i);
  });
});
