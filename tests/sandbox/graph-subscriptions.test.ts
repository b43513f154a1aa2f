import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { createGenerator } from 'ts-json-schema-generator';
import { createGraphSimulator, GRAPH_DEFAULT_ACCESS_TOKEN, type GraphSimulator } from '../../sandbox/graph';
import { WebhookReceiver, type Answer, type ReceivedRequest } from './webhook-receiver';

type Json = Record<string, any>;

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const MINUTE = 60_000;
const AUTH = { authorization: `Bearer ${GRAPH_DEFAULT_ACCESS_TOKEN}` };
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NO_200 = 'Subscription validation request failed. Notification endpoint must respond with 200 OK to validation request.';
const MISMATCH = 'Subscription validation request failed. Response must exactly match validationToken query parameter.';

let sim: GraphSimulator;
let receiver: WebhookReceiver;
let api: string;
const clock = { t: T0 };

/** What a correct receiver does: echo a validation token as text/plain, take notifications with 202. */
function goodEndpoint(r: ReceivedRequest): Answer {
  const token = r.url.searchParams.get('validationToken');
  if (token !== null) return { status: 200, body: token, headers: { 'content-type': 'text/plain; charset=utf-8' } };
  return { status: 202 };
}

beforeEach(async () => {
  clock.t = T0;
  receiver = new WebhookReceiver();
  await receiver.start();
  receiver.answer = goodEndpoint;
  sim = createGraphSimulator({ seed: 3, now: () => clock.t, drives: [{ fileCount: 30 }, { fileCount: 10, driveType: 'documentLibrary' }] });
  api = `${await sim.start()}/v1.0`;
});

afterEach(async () => {
  await sim.stop();
  await receiver.close();
});

async function call(method: string, url: string, json?: unknown, auth = true) {
  const headers: Record<string, string> = auth ? { ...AUTH } : {};
  if (json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : null };
}

function subscriptionBody(extra: Json = {}): Json {
  return {
    changeType: 'updated',
    notificationUrl: `${receiver.url}/notify?source=graph`,
    lifecycleNotificationUrl: `${receiver.url}/lifecycle`,
    resource: '/me/drive/root',
    expirationDateTime: new Date(T0 + 3 * 24 * 60 * MINUTE).toISOString(),
    clientState: 'secret-client-state',
    ...extra,
  };
}

async function subscribe(extra: Json = {}): Promise<Json> {
  const res = await call('POST', `${api}/subscriptions`, subscriptionBody(extra));
  expect(res.status).toBe(201);
  return res.body!;
}

/** The notifications (not validation requests) the receiver got on a path, parsed. */
function notifications(path: string): Json[] {
  return receiver.requests.filter((r) => r.url.pathname === path && !r.url.searchParams.has('validationToken')).map((r) => JSON.parse(r.body) as Json);
}

describe('Graph simulator: subscriptions', () => {
  it('answers and notifies in the shapes of the published Graph types (subscription, changeNotificationCollection)', async () => {
    // As graph-contract.test.ts does: Microsoft's generated entity types, as closed JSON Schemas.
    const generator = createGenerator({
      path: require.resolve('@microsoft/microsoft-graph-types/microsoft-graph.d.ts'),
      skipTypeCheck: true,
      expose: 'all',
      topRef: true,
      additionalProperties: false,
      jsDoc: 'none',
    });
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const subscription = ajv.compile(generator.createSchema('Subscription'));
    const collection = ajv.compile(generator.createSchema('ChangeNotificationCollection'));
    const withoutAnnotations = (o: Json) => Object.fromEntries(Object.entries(o).filter(([k]) => !k.startsWith('@')));

    const created = await subscribe();
    expect(subscription(withoutAnnotations(created)) || subscription.errors).toBe(true);
    const listed = (await call('GET', `${api}/subscriptions`)).body!;
    for (const s of listed.value) expect(subscription(s) || subscription.errors).toBe(true);
    sim.editFiles(1);
    sim.sendLifecycleNotification(created.id, 'missed');
    await sim.flushNotifications();
    const sent = [...notifications('/notify'), ...notifications('/lifecycle')];
    expect(sent).toHaveLength(2);
    for (const n of sent) expect(collection(n) || collection.errors).toBe(true);
  });

  it('validates both URLs with a validationToken before creating, then answers 201 with the subscription', async () => {
    const created = await subscribe();
    const validations = receiver.requests.filter((r) => r.url.searchParams.has('validationToken'));
    expect(validations.map((r) => r.url.pathname)).toEqual(['/notify', '/lifecycle']);
    for (const v of validations) {
      expect(v.method).toBe('POST');
      expect(v.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(v.body).toBe('');
      expect(v.url.searchParams.get('validationToken')).toMatch(
        /^Validation: Testing client application reachability for subscription Request-Id: [0-9a-f-]{36}$/,
      );
    }
    // The notification URL keeps its own query parameters.
    expect(validations[0].url.searchParams.get('source')).toBe('graph');

    expect(created).toEqual({
      '@odata.context': `${api}/$metadata#subscriptions/$entity`,
      id: expect.stringMatching(GUID),
      resource: '/me/drive/root',
      applicationId: expect.stringMatching(GUID),
      changeType: 'updated',
      clientState: 'secret-client-state',
      notificationUrl: `${receiver.url}/notify?source=graph`,
      notificationQueryOptions: null,
      lifecycleNotificationUrl: `${receiver.url}/lifecycle`,
      expirationDateTime: '2026-06-04T12:00:00.0000000Z',
      creatorId: sim.me().id,
      includeResourceData: false,
      latestSupportedTlsVersion: 'v1_2',
      encryptionCertificate: null,
      encryptionCertificateId: null,
      notificationUrlAppId: null,
    });
    const { '@odata.context': _ctx, ...entity } = created;
    expect(await call('GET', `${api}/subscriptions/${created.id}`)).toEqual({ status: 200, body: created });
    expect(await call('GET', `${api}/subscriptions`)).toEqual({ status: 200, body: { '@odata.context': `${api}/$metadata#subscriptions`, value: [entity] } });
    expect(sim.subscriptions()).toEqual([{ ...entity, reauthorizationRequired: false }]);

    // /beta too; a drive by id; no lifecycle URL: one validation only.
    const before = receiver.requests.length;
    const beta = await call('POST', `${api.replace('/v1.0', '/beta')}/subscriptions`, {
      ...subscriptionBody({ resource: `drives/${sim.drives()[1].id}/root` }),
      lifecycleNotificationUrl: undefined,
    });
    expect(beta.status).toBe(201);
    expect(beta.body).toMatchObject({ '@odata.context': `${api.replace('/v1.0', '/beta')}/$metadata#subscriptions/$entity`, lifecycleNotificationUrl: null });
    expect(receiver.requests.length - before).toBe(1);
  });

  it('refuses the subscription when the endpoint answers the handshake wrongly, and stores none', async () => {
    const attempt = async (answer: (r: ReceivedRequest) => Answer, extra: Json = {}) => {
      receiver.answer = answer;
      return call('POST', `${api}/subscriptions`, subscriptionBody(extra));
    };
    const echo = (r: ReceivedRequest) => r.url.searchParams.get('validationToken') ?? '';

    const cases: Array<[string, (r: ReceivedRequest) => Answer, string]> = [
      ['a 500', () => ({ status: 500, body: 'nope' }), NO_200],
      ['a 202 with the token', (r) => ({ status: 202, body: echo(r), headers: { 'content-type': 'text/plain' } }), NO_200],
      ['another body', () => ({ status: 200, body: 'hello', headers: { 'content-type': 'text/plain' } }), MISMATCH],
      ['the token encoded', (r) => ({ status: 200, body: encodeURIComponent(echo(r)), headers: { 'content-type': 'text/plain' } }), MISMATCH],
      ['the token as JSON', (r) => ({ status: 200, body: echo(r), headers: { 'content-type': 'application/json' } }), MISMATCH],
      // The notification URL answers, the lifecycle URL does not.
      ['a failing lifecycle URL', (r) => (r.url.pathname === '/lifecycle' ? { status: 404 } : goodEndpoint(r)), NO_200],
    ];
    for (const [, answer, message] of cases) {
      const res = await attempt(answer);
      expect(res.status).toBe(400);
      expect(res.body!.error).toMatchObject({ code: 'ValidationError', message, innerError: { 'request-id': expect.any(String), date: expect.any(String) } });
    }
    // Nobody listening.
    const dead = new WebhookReceiver();
    const deadUrl = await dead.start();
    await dead.close();
    const unreachable = await call('POST', `${api}/subscriptions`, subscriptionBody({ notificationUrl: `${deadUrl}/notify` }));
    expect(unreachable.status).toBe(400);
    expect(unreachable.body!.error).toMatchObject({ code: 'ValidationError', message: NO_200 });

    expect(sim.subscriptions()).toEqual([]);
    expect((await call('GET', `${api}/subscriptions`)).body!.value).toEqual([]);
  });

  it('refuses bad requests before any validation request', async () => {
    const bad = async (extra: Json, status: number, code: string, message?: string | RegExp) => {
      const res = await call('POST', `${api}/subscriptions`, subscriptionBody(extra));
      expect(res.status).toBe(status);
      expect(res.body!.error.code).toBe(code);
      if (message !== undefined) expect(res.body!.error.message).toMatch(message);
    };
    await bad(
      { expirationDateTime: new Date(T0 + 42_301 * MINUTE).toISOString() },
      400,
      'ExtensionError',
      'Subscription expiration can only be 42300 minutes in the future.',
    );
    await bad({ expirationDateTime: new Date(T0 - MINUTE).toISOString() }, 400, 'ExtensionError');
    await bad({ expirationDateTime: 'tomorrow' }, 400, 'InvalidRequest', /Could not process subscription creation payload/);
    await bad({ expirationDateTime: undefined }, 400, 'InvalidRequest', 'expirationDateTime is a required property for subscription creation.');
    await bad({ clientState: 'x'.repeat(129) }, 400, 'InvalidRequest');
    await bad({ changeType: 'created' }, 400, 'InvalidRequest');
    await bad({ resource: '/me/messages' }, 400, 'InvalidRequest');
    await bad({ resource: 'drives/b!nope/root' }, 404, 'itemNotFound');
    await bad({ notificationUrl: 'not a url' }, 400, 'InvalidRequest');
    const anonymous = await call('POST', `${api}/subscriptions`, subscriptionBody(), false);
    expect(anonymous.status).toBe(401);
    expect(receiver.requests).toEqual([]);

    // 42300 minutes exactly is the longest allowed.
    const longest = await subscribe({ expirationDateTime: new Date(T0 + 42_300 * MINUTE).toISOString(), clientState: 'y'.repeat(128) });
    expect(longest.expirationDateTime).toBe(new Date(T0 + 42_300 * MINUTE).toISOString().replace('.000Z', '.0000000Z'));
  });

  it('notifies each live subscription of its own drive once per change, without item data; delta then shows the change', async () => {
    const mine = await subscribe();
    const other = await subscribe({ resource: `/drives/${sim.drives()[1].id}/root`, notificationUrl: `${receiver.url}/other`, clientState: undefined });
    const drive = sim.drives()[0].id;
    // The app's delta position before the change.
    let next: string | undefined = `${api}/drives/${drive}/root/delta`;
    let deltaLink = '';
    while (next) {
      const page = await call('GET', next);
      next = page.body!['@odata.nextLink'];
      deltaLink = page.body!['@odata.deltaLink'] ?? deltaLink;
    }

    const [edited] = sim.editFiles(1);
    await sim.flushNotifications();
    expect(notifications('/notify')).toEqual([
      {
        value: [
          {
            subscriptionId: mine.id,
            subscriptionExpirationDateTime: mine.expirationDateTime,
            changeType: 'updated',
            resource: '/me/drive/root',
            clientState: 'secret-client-state',
            tenantId: sim.tenantId,
          },
        ],
      },
    ]);
    expect(sim.tenantId).toMatch(GUID);
    expect(notifications('/other')).toEqual([]);
    const delivered = receiver.requests.find((r) => r.url.pathname === '/notify' && !r.url.searchParams.has('validationToken'))!;
    expect(delivered.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(delivered.url.searchParams.get('source')).toBe('graph');
    const changes = await call('GET', deltaLink);
    expect(changes.body!.value.map((i: Json) => i.id)).toContain(edited);

    // Every kind of change, one notification each; the other drive's subscription only for its drive.
    const files = sim.items(drive).filter((i) => i.file);
    const folder = sim.items(drive).find((i) => i.folder && i.parentReference)!;
    sim.addFiles(2);
    sim.deleteItems([files[1].id]);
    sim.renameItem(files[2].id, 'renamed by the test.txt');
    sim.moveItem(files[3].id, folder.id);
    const write = await call('POST', `${api}/drives/${drive}/root/children`, { name: 'New folder', folder: {} });
    expect(write.status).toBe(201);
    sim.addFiles(1, { driveId: sim.drives()[1].id });
    await sim.flushNotifications();
    expect(notifications('/notify')).toHaveLength(6);
    expect(notifications('/other')).toEqual([
      {
        value: [
          {
            subscriptionId: other.id,
            subscriptionExpirationDateTime: other.expirationDateTime,
            changeType: 'updated',
            resource: `/drives/${sim.drives()[1].id}/root`,
            clientState: null,
            tenantId: sim.tenantId,
          },
        ],
      },
    ]);
    // Reads change nothing and notify no one.
    await call('GET', `${api}/me/drive/root/children`);
    await sim.flushNotifications();
    expect(notifications('/notify')).toHaveLength(6);
    expect(sim.notificationDeliveries().every((d) => d.event === 'change' && d.status === 'answered' && d.statusCode === 202 && d.ok)).toBe(true);
  });

  it('renews with PATCH, stops at expiry, and stops after DELETE', async () => {
    const sub = await subscribe();
    const renewTo = new Date(T0 + 10 * 24 * 60 * MINUTE).toISOString();
    const renewed = await call('PATCH', `${api}/subscriptions/${sub.id}`, { expirationDateTime: renewTo });
    expect(renewed.status).toBe(200);
    expect(renewed.body).toMatchObject({ id: sub.id, expirationDateTime: renewTo.replace('.000Z', '.0000000Z') });
    const tooFar = await call('PATCH', `${api}/subscriptions/${sub.id}`, { expirationDateTime: new Date(T0 + 42_301 * MINUTE).toISOString() });
    expect(tooFar.status).toBe(400);
    expect(tooFar.body!.error.code).toBe('ExtensionError');

    // Past the first expiry, within the renewed one: still notified.
    clock.t = T0 + 5 * 24 * 60 * MINUTE;
    sim.editFiles(1);
    await sim.flushNotifications();
    expect(notifications('/notify')).toHaveLength(1);
    expect(notifications('/notify')[0].value[0].subscriptionExpirationDateTime).toBe(renewTo.replace('.000Z', '.0000000Z'));

    // Expired: nothing sent, and gone from the API.
    clock.t = T0 + 11 * 24 * 60 * MINUTE;
    sim.editFiles(1);
    await sim.flushNotifications();
    expect(notifications('/notify')).toHaveLength(1);
    expect((await call('GET', `${api}/subscriptions/${sub.id}`)).status).toBe(404);
    expect((await call('PATCH', `${api}/subscriptions/${sub.id}`, { expirationDateTime: new Date(clock.t + MINUTE).toISOString() })).status).toBe(404);
    expect(sim.subscriptions()).toEqual([]);

    // DELETE: 204, then silence.
    clock.t = T0;
    const doomed = await subscribe();
    const del = await fetch(`${api}/subscriptions/${doomed.id}`, { method: 'DELETE', headers: AUTH });
    expect(del.status).toBe(204);
    expect((await call('DELETE', `${api}/subscriptions/${doomed.id}`)).body!.error.code).toBe('ResourceNotFound');
    sim.editFiles(1);
    await sim.flushNotifications();
    expect(notifications('/notify')).toHaveLength(1);
  });

  it('sends lifecycle notifications to the lifecycle URL; subscriptionRemoved ends the subscription', async () => {
    const sub = await subscribe();
    sim.sendLifecycleNotification(sub.id, 'reauthorizationRequired');
    await sim.flushNotifications();
    expect(notifications('/lifecycle')).toEqual([
      {
        value: [
          {
            subscriptionId: sub.id,
            subscriptionExpirationDateTime: sub.expirationDateTime,
            tenantId: sim.tenantId,
            clientState: 'secret-client-state',
            lifecycleEvent: 'reauthorizationRequired',
          },
        ],
      },
    ]);
    expect(sim.subscriptions()[0].reauthorizationRequired).toBe(true);
    const reauthorized = await fetch(`${api}/subscriptions/${sub.id}/reauthorize`, { method: 'POST', headers: AUTH });
    expect(reauthorized.status).toBe(204);
    expect(sim.subscriptions()[0].reauthorizationRequired).toBe(false);

    sim.sendLifecycleNotification(sub.id, 'missed');
    sim.sendLifecycleNotification(sub.id, 'subscriptionRemoved');
    await sim.flushNotifications();
    expect(notifications('/lifecycle').map((n) => n.value[0].lifecycleEvent)).toEqual(['reauthorizationRequired', 'missed', 'subscriptionRemoved']);
    expect(sim.notificationDeliveries().map((d) => [d.event, d.action])).toEqual([
      ['lifecycle', 'reauthorizationRequired'],
      ['lifecycle', 'missed'],
      ['lifecycle', 'subscriptionRemoved'],
    ]);
    expect(sim.subscriptions()).toEqual([]);
    expect((await call('GET', `${api}/subscriptions/${sub.id}`)).status).toBe(404);
    sim.editFiles(1);
    await sim.flushNotifications();
    expect(notifications('/notify')).toEqual([]);
    expect(() => sim.sendLifecycleNotification(sub.id, 'missed')).toThrow(/no live subscription/);
    const plain = await subscribe({ lifecycleNotificationUrl: undefined });
    expect(() => sim.sendLifecycleNotification(plain.id, 'missed')).toThrow(/no lifecycleNotificationUrl/);
  });

  it('records a failed notification without retrying it; redeliverNotification sends the same body', async () => {
    await subscribe();
    receiver.answer = (r) => (r.url.searchParams.has('validationToken') ? goodEndpoint(r) : { status: 503 });
    sim.editFiles(1);
    await sim.flushNotifications();
    const [failed] = sim.notificationDeliveries();
    expect(failed).toMatchObject({ event: 'change', status: 'answered', statusCode: 503, ok: false, attempt: 1 });
    expect(notifications('/notify')).toHaveLength(1);
    receiver.answer = goodEndpoint;
    sim.redeliverNotification(failed.id);
    await sim.flushNotifications();
    expect(notifications('/notify')).toHaveLength(2);
    expect(notifications('/notify')[1]).toEqual(notifications('/notify')[0]);
    expect(sim.notificationDeliveries()[1]).toMatchObject({ id: failed.id, statusCode: 202, ok: true, attempt: 2, redelivery: true });
  });
});
