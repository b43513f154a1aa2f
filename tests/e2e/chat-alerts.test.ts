import type { FailedSyncRun, SucceededSyncRun } from '../../webhooks/sync-run-report';
import { syncWorkflowId } from '../../control';
import { coreWebhookDelivery } from '../../app/webhook-delivery';
import { alertScope } from '../../store/alert-states';
import { createChatAlerts } from '../../webhooks/chat-alerts';
import { GRAPH_DEFAULT_ACCESS_TOKEN } from '../../sandbox/graph';
import { startWebhookReceiver, type ReceivedWebhook } from '../support/webhook-receiver';
import { connectOneDrive, createLumaIntegration, createOneDriveIntegration, runSync, startWeftStack, type WeftStack } from '../support/weft-stack';
import { waitFor } from '../support/wait';

/**
 * Chat alerts on the real stack: syncs made to fail by the Luma simulator, each failure
 * reported by the worker's bookkeeping activity, each alert delivered by its webhookDelivery
 * workflow to a local receiver standing in for a Slack incoming webhook.
 */

const LUMA_KEY = 'sandbox-luma-api-key';
const BURST = 20;
const WINDOW_SECRET = 'abc123-not-for-chat';

describe('chat alerts', () => {
  let stack: WeftStack;
  let slack: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    slack = await startWebhookReceiver();
    stack = await startWeftStack({
      egressAllow: { webhooks: [slack.url] },
      temporalCallTimeoutMs: 10_000,
      luma: { eventCount: 5 },
      graph: { drives: [{ fileCount: 3 }] },
    });
    await createLumaIntegration(stack);
    await createOneDriveIntegration(stack);
    for (const id of ['quiet', 'burst-a', 'burst-b', 'refused']) {
      const res = await stack.client.POST('/connections', {
        body: { provider_config_key: 'luma', connection_id: id, credentials: { type: 'API_KEY', apiKey: LUMA_KEY } },
      });
      expect(res.response.status).toBe(201);
    }
    // OAuth without a refresh token: a forced refresh is refused (refresh_token_missing).
    expect((await connectOneDrive(stack, 'drive-user')).status).toBe(201);
    await Promise.all([
      ...['quiet', 'burst-a', 'burst-b', 'refused'].map((id) => stack.waitForSync(id, 'list-events')),
      stack.waitForSync('drive-user', 'user-files', { providerConfigKey: 'one-drive' }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await stack?.shutdown();
    await slack?.close();
  });

  const alertEvents = () => stack.core.stores.db.collection('webhook_outbox').find({ type: 'alert' }).toArray();
  const sectionTexts = (w: ReceivedWebhook): string => JSON.stringify(w.body.blocks);
  const header = (w: ReceivedWebhook): string => w.body.blocks[0].text.text;

  /** Runs the sync `times` times in a row, each failing. */
  async function failRuns(connectionId: string, times: number): Promise<void> {
    for (let i = 0; i < times; i += 1) await expect(runSync(stack, 'luma', connectionId, 'list-events')).rejects.toThrow();
  }

  /** Every alert queued so far delivered to the receiver; then the receiver's messages. */
  async function delivered(): Promise<ReceivedWebhook[]> {
    const queued = (await alertEvents()).length;
    await waitFor(async () => slack.received.length >= queued, 30_000, `${queued} alerts delivered`);
    return slack.received;
  }

  test('nothing is sent or kept while the environment has no alert_webhook_url', async () => {
    stack.luma.failNext(1_000, 400);
    await failRuns('quiet', 3);
    stack.luma.failNext(0, 400);
    await runSync(stack, 'luma', 'quiet', 'list-events');
    expect(await alertEvents()).toHaveLength(0);
    expect(await stack.core.stores.db.collection('alert_states').countDocuments()).toBe(0);
    expect(slack.received).toHaveLength(0);
  });

  test('a burst of failures of two syncs at once: one alert each, counted into the resolved message', async () => {
    expect((await stack.client.PATCH('/environment', { body: { alert_webhook_url: slack.url } })).response.status).toBe(200);
    stack.luma.failNext(10_000, 400);
    await Promise.all([failRuns('burst-a', BURST), failRuns('burst-b', BURST)]);
    stack.luma.failNext(0, 400);

    const alerts = await delivered();
    expect(alerts).toHaveLength(2);
    for (const connectionId of ['burst-a', 'burst-b']) {
      const [alert] = alerts.filter((w) => sectionTexts(w).includes(`*Connection*\\n${connectionId}`));
      expect(header(alert)).toBe('Sync failed: list-events');
      expect(alert.body.text).toContain(`luma connection ${connectionId} failed (provider_http_error)`);
      expect(sectionTexts(alert)).toContain('*Error code*\\n`provider_http_error`');
      expect(sectionTexts(alert)).toContain('*Integration*\\nluma (luma)');
      expect(sectionTexts(alert)).toContain('*Sync*\\nlist-events');
      // The failed run's history page in the Temporal UI.
      const workflowId = syncWorkflowId(stack.temporalIdPrefix, 'dev', 'luma', connectionId, 'list-events', 'base');
      const button = alert.body.blocks.at(-1).elements[0];
      expect(button.url).toMatch(
        new RegExp(
          `^http://localhost:8233/namespaces/${stack.env.TEMPORAL_NAMESPACE}/workflows/${escapeRegExp(encodeURIComponent(workflowId))}/[0-9a-f-]{36}/history$`,
        ),
      );
    }

    // The next success of burst-a resolves its episode, with every failure of the burst counted.
    await runSync(stack, 'luma', 'burst-a', 'list-events');
    const resolved = await slack.waitFor((w) => header(w) === 'Resolved: list-events');
    expect(resolved.body.text).toContain(`Resolved: sync list-events of luma connection burst-a succeeded again after ${BURST} failed runs`);
    expect(sectionTexts(resolved)).toContain(`provider_http_error × ${BURST}`);
    // Resolved once: a further success has nothing to resolve; burst-b, still failing, is not resolved.
    await runSync(stack, 'luma', 'burst-a', 'list-events');
    expect(await delivered()).toHaveLength(3);
    expect(slack.received.filter((w) => header(w).startsWith('Resolved'))).toHaveLength(1);
  });

  test('a connection whose credentials are refused needs re-authorization: from a sync and from a token refresh', async () => {
    const before = slack.received.length;
    // Luma refuses the key: the sync fails with provider_auth_failed, twice, alerted once.
    stack.luma.failNext(1_000, 401);
    await failRuns('refused', 2);
    stack.luma.failNext(0, 401);
    // The OAuth connection's forced refreshes, concurrently: each refused, one alert.
    const refreshes = await Promise.all(
      Array.from({ length: 4 }, () =>
        stack.client.GET('/connections/{connectionId}', {
          params: { path: { connectionId: 'drive-user' }, query: { provider_config_key: 'one-drive', force_refresh: 'true' } },
        }),
      ),
    );
    for (const r of refreshes) expect(r.response.status).toBeGreaterThanOrEqual(400);

    const alerts = (await delivered()).slice(before);
    expect(alerts).toHaveLength(2);
    const fromSync = alerts.find((w) => header(w) === 'Connection needs re-authorization: list-events');
    expect(fromSync?.body.text).toContain('luma connection refused needs re-authorization');
    expect(sectionTexts(fromSync!)).toContain('`provider_auth_failed`');
    const fromRefresh = alerts.find((w) => header(w) === 'Connection needs re-authorization: drive-user');
    expect(fromRefresh?.body.text).toContain('one-drive connection drive-user needs re-authorization (refresh_token_missing)');
    // No run to link to.
    expect(fromRefresh!.body.blocks.some((b: { type: string }) => b.type === 'actions')).toBe(false);
  });

  test('one alert per window whoever reports: concurrent and repeated reports, the next window counting the failures in between', async () => {
    const before = slack.received.length;
    // The worker's alerts, driven directly: windows are minutes long on the stack (WEFT_ALERT_WINDOW_MINUTES).
    const alerts = createChatAlerts({
      stores: stack.core.stores,
      cipher: stack.core.cipher,
      logger: stack.core.logger,
      egress: stack.egress.webhooks,
      startDelivery: coreWebhookDelivery(stack.core),
      temporalUiUrl: 'https://temporal.example.com/ui/',
      temporalNamespace: 'weft prod',
      windowMs: 60_000,
    });
    const t0 = Date.now();
    const identity = (i: number, at: number) => ({
      environment: 'dev',
      connection: 'window-connection-doc',
      connectionId: 'window-user',
      providerConfigKey: 'luma',
      provider: 'luma',
      syncName: 'list-events',
      variant: 'eu',
      runId: `run-${i}`,
      workflowId: 'wf:window',
      type: 'INCREMENTAL' as const,
      startedAt: new Date(at - 1_000),
    });
    // Runs as the bookkeeping activities report them.
    const fail = (i: number, at: number) => {
      const run: FailedSyncRun = {
        ...identity(i, at),
        failedAt: new Date(at),
        models: ['CalendarEvent'],
        error: { code: 'provider_unreachable', message: `GET https://svc:${WINDOW_SECRET}@api.lu.ma/v1/x?api_key=${WINDOW_SECRET} failed: ECONNRESET` },
      };
      return alerts.failed(run);
    };
    // Ten failures reported at once (as by ten worker processes), one of them twice (a retried activity).
    await Promise.all([...Array.from({ length: 10 }, (_, i) => fail(i, t0 + i)), fail(3, t0 + 3)]);
    await fail(10, t0 + 30_000); // inside the window: counted
    await fail(11, t0 + 70_000); // the next window: alerted
    await fail(11, t0 + 70_000); // reported again: nothing new
    const episode = await stack.core.stores.alertStates.episode(alertScope('window-connection-doc', { name: 'list-events', variant: 'eu' }));
    const marks = await stack.core.stores.alertStates.alerts(episode!, 'provider_unreachable');
    expect(marks.map((m) => m.index)).toEqual([0, 1]);
    // What the first alert accounted for: itself and the failures recorded before it was claimed.
    const firstReported = marks[0].reported;
    expect(firstReported).toBeGreaterThanOrEqual(1);
    expect(firstReported).toBeLessThanOrEqual(10);
    const success: SucceededSyncRun = { ...identity(12, t0 + 80_000), finishedAt: new Date(t0 + 80_000), models: [] };
    await alerts.succeeded(success);

    const messages = (await delivered()).slice(before);
    expect(messages).toHaveLength(3);
    const resolved = messages.find((w) => header(w).startsWith('Resolved'))!;
    const second = messages.find((w) => w.body.text.includes('since the last alert'))!;
    const first = messages.find((w) => w !== resolved && w !== second)!;
    expect(header(first)).toBe('Sync failed: list-events (variant eu)');
    expect(first.body.blocks.at(-1).elements[0].url).toBe(
      `https://temporal.example.com/ui/namespaces/weft%20prod/workflows/wf%3Awindow/${marks[0].run}/history`,
    );
    // The second tells of every failure the first did not account for, and of the episode's total.
    expect(second.body.text).toContain(`${11 - firstReported} more failure`);
    expect(second.body.text).toContain('12 failed runs since');
    expect(second.body.blocks.at(-1).elements[0].url).toBe('https://temporal.example.com/ui/namespaces/weft%20prod/workflows/wf%3Awindow/run-11/history');
    expect(resolved.body.text).toContain('Resolved: sync list-events (variant eu) of luma connection window-user succeeded again after 12 failed runs');
    expect(sectionTexts(resolved)).toContain('provider_unreachable × 12');
    // Forgotten once resolved.
    expect(await stack.core.stores.alertStates.episode(alertScope('window-connection-doc', { name: 'list-events', variant: 'eu' }))).toBeNull();
  });

  test("no alert carries a secret: API keys, tokens, Weft's keys, or a URL's query string", () => {
    const secrets = [WINDOW_SECRET, LUMA_KEY, GRAPH_DEFAULT_ACCESS_TOKEN, stack.keys.dev, stack.keys.prod, stack.env.WEFT_ENCRYPTION_KEY];
    expect(slack.received.length).toBeGreaterThan(0);
    for (const w of slack.received) {
      for (const s of secrets) expect(w.raw).not.toContain(s);
      for (const url of w.raw.match(/https?:\/\/[^\s"`\\]+/g) ?? []) expect(url).not.toMatch(/[?#]/);
    }
  });
});

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
