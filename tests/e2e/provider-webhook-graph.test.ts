import { startWebhookReceiver } from '../support/webhook-receiver';
import { connectOneDrive, createOneDriveIntegration, readAllRecords, startWeftStack, type WeftStack } from '../support/weft-stack';
import { waitUntil } from '../support/wait';

/**
 * OneDrive connections hold Graph subscriptions for their life: made when the connection is
 * (Graph's validation handshake answered by the intake), renewed or made again when Graph
 * says so, deleted with the connection; Graph's change notifications, checked against each
 * subscription's own clientState, reach the app (`forward`) and run the files sync.
 */
describe('Microsoft Graph subscriptions and change notifications', () => {
  let stack: WeftStack;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let intake: string;
  const live = () => stack.graph.subscriptions();

  beforeAll(async () => {
    hooks = await startWebhookReceiver();
    stack = await startWeftStack({
      publicUrl: true,
      graph: { seed: 5, drives: [{ fileCount: 12 }, { fileCount: 4, driveType: 'documentLibrary', name: 'Team files' }] },
      egressAllow: { webhooks: [hooks.url] },
    });
    await createOneDriveIntegration(stack);
    expect((await stack.api('PATCH', '/environment', { body: { webhook_url: hooks.url } })).status).toBe(200);
    intake = (await stack.api('GET', '/integrations/one-drive?include=webhook')).body.data.webhook_url;
    expect(intake).toBe(`${stack.apiUrl}/webhooks/providers/dev/one-drive`);
    expect((await connectOneDrive(stack, 'od-a')).status).toBe(201);
    await stack.waitForSync('od-a', 'user-files', { providerConfigKey: 'one-drive' });
  });

  afterAll(async () => {
    await stack?.shutdown();
    await hooks?.close();
  });

  test('a new connection subscribes to each of its drives, at the intake, after Graph validated it', async () => {
    await waitUntil(() => live().length === 2, 30_000);
    const drives = stack.graph.drives().map((d) => d.id);
    expect(
      live()
        .map((s) => s.resource)
        .sort(),
    ).toEqual(drives.map((id) => `/drives/${id}/root`).sort());
    for (const subscription of live()) {
      expect(subscription).toMatchObject({ changeType: 'updated', notificationUrl: intake, lifecycleNotificationUrl: intake });
      // A secret per subscription, never one Weft shows or logs.
      expect(subscription.clientState).toMatch(/^[\w-]{32}$/);
      expect(stack.logs.join('\n')).not.toContain(subscription.clientState);
    }
    expect(new Set(live().map((s) => s.clientState)).size).toBe(2);
  });

  test('files added in a drive: the notification is forwarded to the app and the files sync brings them in', async () => {
    await waitUntil(() => live().length === 2, 30_000);
    const added = stack.graph.addFiles(2);
    await stack.graph.flushNotifications();
    const delivered = stack.graph.notificationDeliveries().at(-1)!;
    expect(delivered).toMatchObject({ status: 'answered', statusCode: 202 });
    const forwarded = await hooks.waitFor(
      (w) => w.body?.type === 'forward' && w.body.connectionId === 'od-a' && w.body.payload?.changeType === 'updated',
      30_000,
    );
    expect(forwarded.body).toMatchObject({ from: 'one-drive', providerConfigKey: 'one-drive' });
    expect(live().map((s) => s.id)).toContain(forwarded.body.payload.subscriptionId);
    await waitUntil(async () => {
      const ids = (await readAllRecords(stack, 'od-a', 'File', {}, 'one-drive')).map((r: { id: string }) => r.id);
      return added.every((id) => ids.includes(id));
    }, 30_000);
  });

  test('forged notifications are refused and stored nowhere; the validation handshake echoes its token as text', async () => {
    const before = await stack.core.stores.db.collection('provider_deliveries').countDocuments({});
    const [subscription] = live();
    const post = (body: unknown, query = '') =>
      fetch(`${intake}${query}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const notification = { subscriptionId: subscription.id, changeType: 'updated', resource: subscription.resource, tenantId: stack.graph.tenantId };

    const wrong = await post({ value: [{ ...notification, clientState: 'not-the-secret' }] });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('invalid_client_state');
    const none = await post({ value: [notification] });
    expect(none.status).toBe(401);
    // A subscription Weft does not have: nothing to attribute it to, nothing stored.
    const unknown = await post({ value: [{ ...notification, subscriptionId: '00000000-0000-0000-0000-000000000000', clientState: 'x' }] });
    expect(unknown.status).toBe(202);
    expect(await unknown.json()).toMatchObject({ id: null, stored: 0 });
    const malformed = await post({ value: 'nope' });
    expect(malformed.status).toBe(400);
    expect(await stack.core.stores.db.collection('provider_deliveries').countDocuments({})).toBe(before);

    const handshake = await fetch(`${intake}?validationToken=${encodeURIComponent('Validation: Testing 123')}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
    });
    expect(handshake.status).toBe(200);
    expect(handshake.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await handshake.text()).toBe('Validation: Testing 123');
  });

  test('lifecycle notifications: reauthorization renews, a removed subscription is made again, missed changes run the sync', async () => {
    await waitUntil(() => live().length === 2, 30_000);
    const [first, second] = live();

    stack.graph.sendLifecycleNotification(first.id, 'reauthorizationRequired');
    await stack.graph.flushNotifications();
    await waitUntil(() => {
      const now = live().find((s) => s.id === first.id);
      return now && !now.reauthorizationRequired && now.expirationDateTime > first.expirationDateTime;
    }, 30_000);

    stack.graph.sendLifecycleNotification(second.id, 'subscriptionRemoved');
    await stack.graph.flushNotifications();
    await waitUntil(() => live().length === 2 && !live().some((s) => s.id === second.id), 30_000);
    const remade = live().find((s) => s.resource === second.resource)!;
    expect(remade.id).not.toBe(second.id);

    // Changes Graph could not send: a run of the files sync picks them up.
    const added = stack.graph.addFiles(1, { driveId: stack.graph.drives()[0].id });
    const missedOf = live()[0];
    stack.graph.sendLifecycleNotification(missedOf.id, 'missed');
    await stack.graph.flushNotifications();
    await waitUntil(async () => {
      const ids = (await readAllRecords(stack, 'od-a', 'File', {}, 'one-drive')).map((r: { id: string }) => r.id);
      return ids.includes(added[0]);
    }, 30_000);
  });

  test('deleting the connection deletes its subscriptions at Graph', async () => {
    await waitUntil(() => live().length === 2, 30_000);
    expect((await stack.api('DELETE', '/connections/od-a?provider_config_key=one-drive')).status).toBe(200);
    expect(live()).toEqual([]);
    expect(await stack.core.stores.db.collection('provider_subscriptions').countDocuments({})).toBe(0);
  });
});
