import { createHmac, randomUUID } from 'node:crypto';
import { startWebhookReceiver, type ReceivedWebhook } from '../support/webhook-receiver';
import { recordRoutesOfEarlierConnections } from '../../control';
import type { OutboxDeps } from '../../webhooks/outbox';
import { connectGitHub, createGitHubIntegration, readAllRecords, startWeftStack, type WeftStack } from '../support/weft-stack';
import { waitUntil } from '../support/wait';

const SECRET = 'whsec-github-app-0123456789abcdef';

/**
 * A change at GitHub reaches the app as it happens: the simulator sends the App's signed
 * delivery to Weft's intake, the worker attributes it to the connections of that
 * installation, forwards it (`forward` webhook, Nango's shape) and acts on it: the
 * pull-requests sync saves the pull request it carries (onWebhook), the repositories sync
 * runs, its records and `sync` webhook following.
 */
describe('GitHub App webhooks: attributed, forwarded, and acted on', () => {
  let stack: WeftStack;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let repo: string;
  const forwards = (connectionId: string) => hooks.received.filter((w) => w.body?.type === 'forward' && w.body.connectionId === connectionId);
  const syncHooks = (connectionId: string, model: string) =>
    hooks.received.filter((w) => w.body?.type === 'sync' && w.body.connectionId === connectionId && w.body.model === model);

  beforeAll(async () => {
    hooks = await startWebhookReceiver();
    stack = await startWeftStack({
      github: {
        seed: 11,
        pullsPerRepo: 8,
        installations: [
          { id: 1001, account: { login: 'sandbox-org', type: 'Organization' }, repositoryCount: 2 },
          { id: 1002, account: { login: 'other-org', type: 'Organization' }, repositoryCount: 1 },
        ],
      },
      egressAllow: { webhooks: [hooks.url] },
    });
    await createGitHubIntegration(stack, 'github', { webhookSecret: SECRET });
    // Every run tells the app, so the test can count runs by their webhooks.
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: hooks.url, send_sync_completion_always: true } })).status).toBe(200);

    // The App's webhook URL is the one Weft gives (GET /integrations/:key?include=webhook).
    const integration = await stack.api('GET', '/integrations/github?include=webhook');
    expect(integration.body.data.webhook_url).toBe(`${stack.apiUrl}/webhooks/providers/dev/github`);
    stack.github.setAppWebhook({ url: integration.body.data.webhook_url, secret: SECRET });

    // Two connections of installation 1001 (the same account, two of the app's users) and one of 1002.
    for (const [connectionId, installation] of [
      ['gh-a', 1001],
      ['gh-b', 1001],
      ['gh-other', 1002],
    ] as const) {
      const made = await connectGitHub(stack, connectionId, installation);
      if (made.status !== 201) throw new Error(JSON.stringify(made.body));
      // Both auto-started syncs' first runs over before the tests count GitHub's calls.
      await stack.waitForSync(connectionId, 'pull-requests', { providerConfigKey: 'github' });
      await stack.waitForSync(connectionId, 'repositories', { providerConfigKey: 'github' });
    }
    repo = stack.github.repositories(1001)[0].full_name;
  });

  afterAll(async () => {
    await stack?.shutdown();
    await hooks?.close();
  });

  test('commits pushed to a pull request at GitHub: forwarded to each connection of its installation, and their records updated from the delivery, with no call to GitHub', async () => {
    const number = openPull(stack, repo);
    const callsBefore = stack.github.stats().requests;
    const runsBefore = syncHooks('gh-a', 'PullRequest').length + syncHooks('gh-b', 'PullRequest').length;
    stack.github.addCommits(repo, number, 2);
    await stack.github.flushWebhooks();
    const delivery = stack.github.webhookDeliveries().at(-1)!;
    expect(delivery).toMatchObject({ status: 'answered', statusCode: 202 });

    for (const connectionId of ['gh-a', 'gh-b']) {
      const forwarded = await hooks.waitFor(
        (w) => w.body?.type === 'forward' && w.body.connectionId === connectionId && w.body.payload?.number === number,
        30_000,
      );
      expect(forwarded.body).toMatchObject({ from: 'github', type: 'forward', connectionId, providerConfigKey: 'github' });
      expect(forwarded.body.payload.installation.id).toBe(1001);
      expect(forwarded.body.payload.pull_request.number).toBe(number);
    }
    expect(forwards('gh-other')).toHaveLength(0);

    // The sync's onWebhook saves the pull request as the delivery carries it: GitHub is not called, no run starts.
    const now = stack.github.pullRequests(repo).find((p) => p.number === number)!;
    for (const connectionId of ['gh-a', 'gh-b'])
      await waitUntil(async () => {
        const record = (await pullRecord(stack, connectionId, repo, number)) as { updated_at?: string; state?: string } | undefined;
        return record?.updated_at === now.updated_at && record?.state === now.state;
      }, 30_000);
    expect(stack.github.stats().requests).toBe(callsBefore);
    expect(syncHooks('gh-a', 'PullRequest').length + syncHooks('gh-b', 'PullRequest').length).toBe(runsBefore);

    const stored = await stack.api('GET', '/integrations/github/webhook-deliveries?status=processed');
    const entry = stored.body.data.find((d: { delivery_id: string }) => d.delivery_id === delivery.id);
    expect(entry).toMatchObject({ event: 'pull_request', status: 'processed', route: 'installation:1001' });
    expect([...entry.connection_ids].sort()).toEqual(['gh-a', 'gh-b']);
    expect([...entry.syncs].sort()).toEqual(['gh-a/pull-requests', 'gh-b/pull-requests']);
    expect(entry.forwarded).toHaveLength(2);
  });

  test('repositories added to the installation: the repositories sync runs (a run or two for the burst, not one each) and the last sees every one', async () => {
    await waitUntil(async () => !(await running(stack, 'gh-a', 'repositories')), 30_000);
    const before = syncHooks('gh-a', 'Repository').length;
    const added = [1, 2, 3, 4].map(() => stack.github.addRepository(1001));
    await stack.github.flushWebhooks();
    await waitUntil(async () => {
      const names = (await readAllRecords(stack, 'gh-a', 'Repository', {}, 'github')).map((r: { full_name: string }) => r.full_name);
      return added.every((n) => names.includes(n));
    }, 60_000);
    await waitUntil(async () => !(await running(stack, 'gh-a', 'repositories')), 30_000);
    // Each run's `sync` webhook follows its end through the outbox.
    await waitUntil(() => syncHooks('gh-a', 'Repository').length > before, 30_000);
    // Deliveries processed together ask once; one processed during a run makes one more after
    // it. Four deliveries over ~0.1 s span at most two runs' worth of time even on a loaded box.
    expect(syncHooks('gh-a', 'Repository').length - before).toBeLessThanOrEqual(3);
  });

  test('a delivery of an installation no connection holds is kept as unmatched and listed, never forwarded', async () => {
    const body = JSON.stringify({ action: 'opened', number: 1, installation: { id: 424242 }, pull_request: { number: 1 } });
    const deliveryId = randomUUID();
    const res = await fetch(`${stack.apiUrl}/webhooks/providers/dev/github`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': deliveryId,
        'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
      },
      body,
    });
    expect(res.status).toBe(202);
    let listed: Array<{ delivery_id: string; route: string; connection_ids: string[] }> = [];
    await waitUntil(async () => {
      listed = (await stack.api('GET', '/integrations/github/webhook-deliveries?status=unmatched')).body.data;
      return listed.some((d) => d.delivery_id === deliveryId);
    }, 30_000);
    expect(listed.find((d) => d.delivery_id === deliveryId)).toMatchObject({ route: 'installation:424242', connection_ids: [], forwarded: [] });
    // Other tests' forwards may still be arriving, so count only this installation's.
    const forwardedOfIt = (w: ReceivedWebhook) => w.body?.type === 'forward' && w.body.payload?.installation?.id === 424242;
    expect(hooks.received.filter(forwardedOfIt)).toHaveLength(0);
  });

  test('a malformed body is refused before anything is stored; a paused sync takes nothing from deliveries', async () => {
    const body = 'not json';
    const res = await fetch(`${stack.apiUrl}/webhooks/providers/dev/github`, {
      method: 'POST',
      headers: {
        'x-github-event': 'pull_request',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
      },
      body,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_delivery');

    expect(
      (await stack.api('POST', '/sync/pause', { body: { provider_config_key: 'github', connection_id: 'gh-other', syncs: ['pull-requests'] } })).status,
    ).toBe(200);
    const otherRepo = stack.github.repositories(1002)[0].full_name;
    const number = openPull(stack, otherRepo);
    const recordBefore = await pullRecord(stack, 'gh-other', otherRepo, number);
    expect(recordBefore).toBeDefined();
    stack.github.addCommits(otherRepo, number, 1);
    await stack.github.flushWebhooks();
    // Forwarded (the app still hears of it), but the paused sync takes nothing from it.
    await hooks.waitFor((w) => w.body?.type === 'forward' && w.body.connectionId === 'gh-other' && w.body.payload?.number === number, 30_000);
    const delivery = stack.github.webhookDeliveries().at(-1)!;
    await waitUntil(async () => {
      const list = (await stack.api('GET', '/integrations/github/webhook-deliveries?status=processed')).body.data;
      return list.some((d: { delivery_id: string }) => d.delivery_id === delivery.id);
    }, 30_000);
    expect(await pullRecord(stack, 'gh-other', otherRepo, number)).toEqual(recordBefore);
    expect(await running(stack, 'gh-other', 'pull-requests')).toBe(false);
  });
});

/** A pull request that is open: pushing commits to it makes GitHub send `pull_request` `synchronize`. */
function openPull(stack: WeftStack, repository: string): number {
  const open = stack.github.pullRequests(repository, { state: 'open' });
  if (open.length === 0) throw new Error(`no open pull request in ${repository}`);
  return open[0].number;
}

describe('connections stored before provider webhooks existed', () => {
  test('get their routes once per database, from their credentials', async () => {
    const stack = await startWeftStack({ github: { seed: 12 }, worker: false });
    try {
      await createGitHubIntegration(stack);
      expect((await connectGitHub(stack, 'earlier', 1001)).status).toBe(201);
      const { stores, cipher, registry } = stack.core;
      const connection = (await stores.connections.find({ environment: 'dev', providerConfigKey: 'github', connectionId: 'earlier' }))!;
      // As an earlier version left it: no routes, no marker.
      await stores.db.collection('provider_webhook_routes').deleteMany({});
      await stores.db.collection('store_migrations').deleteOne({ _id: 'provider_webhook_routes' as never });
      expect(await stores.providerDeliveries.connectionsOf('dev', 'github', 'installation:1001')).toEqual([]);

      const deps = { registry, stores, outbox: { cipher } as OutboxDeps };
      expect(await recordRoutesOfEarlierConnections(deps)).toBe(1);
      expect(await stores.providerDeliveries.connectionsOf('dev', 'github', 'installation:1001')).toEqual([connection._id]);
      // Once: the marker keeps a second start from reading every connection again.
      expect(await recordRoutesOfEarlierConnections(deps)).toBe(0);
    } finally {
      await stack.shutdown();
    }
  });
});

async function running(stack: WeftStack, connectionId: string, sync: string): Promise<boolean> {
  const res = await stack.api('GET', `/sync/status?provider_config_key=github&connection_id=${connectionId}&syncs=${sync}`);
  return res.body.syncs?.[0]?.status === 'RUNNING';
}

async function pullRecord(stack: WeftStack, connectionId: string, repository: string, number: number): Promise<unknown> {
  const records = await readAllRecords(stack, connectionId, 'PullRequest', {}, 'github');
  return records.find((r: { number: number; repository: string }) => r.number === number && r.repository === repository);
}
