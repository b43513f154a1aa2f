import { createHmac, randomUUID } from 'node:crypto';
import { createGitHubIntegration, createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';

const SECRET = 'whsec-github-app-0123456789abcdef';

/** A delivery as GitHub sends one: the raw body, its HMAC in X-Hub-Signature-256, a delivery GUID and the event. */
function githubDelivery(body: string, opts: { secret?: string; deliveryId?: string; event?: string; signature?: string | null } = {}) {
  const signature =
    opts.signature === undefined
      ? `sha256=${createHmac('sha256', opts.secret ?? SECRET)
          .update(body)
          .digest('hex')}`
      : opts.signature;
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-delivery': opts.deliveryId ?? randomUUID(),
      'x-github-event': opts.event ?? 'pull_request',
      ...(signature === null ? {} : { 'x-hub-signature-256': signature }),
    },
    body,
  };
}

describe('provider webhook intake: POST /webhooks/providers/:environment/:integration', () => {
  let stack: WeftStack;
  const url = (environment = 'dev', integration = 'github') => `${stack.apiUrl}/webhooks/providers/${environment}/${integration}`;
  const stored = () => stack.core.stores.db.collection('provider_deliveries').find({}).toArray();

  beforeAll(async () => {
    stack = await startWeftStack({ github: { seed: 7 } });
    const app = {
      type: 'APP',
      app_id: String(stack.github.app.id),
      app_link: stack.github.app.publicLink,
      private_key: stack.github.appPrivateKeyPem,
    };
    const created = await stack.api('POST', '/integrations', {
      body: { unique_key: 'github', provider: 'github', credentials: { ...app, webhook_secret: SECRET }, provider_overrides: { base_url: stack.github.url } },
    });
    expect(created.status).toBe(201);
    // The same App without a webhook secret, and an integration whose provider sends no webhooks Weft takes in.
    expect((await stack.api('POST', '/integrations', { body: { unique_key: 'github-quiet', provider: 'github', credentials: app } })).status).toBe(201);
    await createLumaIntegration(stack);
  });
  afterAll(async () => {
    await stack?.shutdown();
  });

  test('a signed delivery is stored as it came and answered 202; its redelivery is stored once (200, duplicate)', async () => {
    const body = JSON.stringify({ action: 'edited', installation: { id: 1001 }, pull_request: { number: 7, title: 'Tidy up' } });
    const deliveryId = randomUUID();
    const first = await fetch(url(), githubDelivery(body, { deliveryId }));
    expect(first.status).toBe(202);
    const answer = (await first.json()) as { id: string; duplicate: boolean };
    expect(answer.duplicate).toBe(false);
    const doc = await stack.core.stores.providerDeliveries.get(answer.id);
    expect(doc).toMatchObject({ environment: 'dev', provider_config_key: 'github', provider: 'github', delivery_id: deliveryId, event: 'pull_request', body });

    const again = await fetch(url(), githubDelivery(body, { deliveryId }));
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ id: answer.id, duplicate: true, stored: 0 });
    expect((await stored()).filter((d) => d.delivery_id === deliveryId)).toHaveLength(1);
  });

  test('unsigned, wrongly signed, re-signed after a change of body: 401 invalid_signature, stored nowhere', async () => {
    const before = (await stored()).length;
    const body = JSON.stringify({ action: 'opened', installation: { id: 1001 } });
    const refusals = [
      githubDelivery(body, { signature: null }),
      githubDelivery(body, { secret: 'another-secret-0123456789' }),
      githubDelivery(body, { signature: 'sha256=' }),
      // Signed for one body, sent with another.
      { ...githubDelivery(body), body: body.replace('opened', 'closed') },
    ];
    for (const request of refusals) {
      const res = await fetch(url(), request);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_signature');
    }
    expect((await stored()).length).toBe(before);
  });

  test('what is not a delivery Weft can verify is refused with its own code, and nothing is stored', async () => {
    const before = (await stored()).length;
    const body = JSON.stringify({ zen: 'Keep it logically awesome.' });
    const cases: Array<[string, RequestInit, number, string]> = [
      [url('dev', 'no-such-integration'), githubDelivery(body), 404, 'unknown_integration'],
      // The integration exists in dev only.
      [url('prod', 'github'), githubDelivery(body), 404, 'unknown_integration'],
      // Luma signs nothing: its deliveries are taken in only at a subscription's own URL.
      [url('dev', 'luma'), githubDelivery(body), 404, 'unknown_webhook'],
      [`${url('dev', 'luma')}/not-a-subscription-secret`, githubDelivery(body), 404, 'unknown_webhook'],
      // GitHub signs its deliveries: there is no URL per subscription to send them to.
      [`${url()}/some-secret`, githubDelivery(body), 404, 'webhooks_not_supported'],
      [url('dev', 'github-quiet'), githubDelivery(body), 409, 'webhook_secret_not_set'],
      [url(), { ...githubDelivery(body), headers: { ...githubDelivery(body).headers, 'x-github-delivery': '' } }, 400, 'invalid_delivery'],
      // Larger than a delivery may be.
      [url(), githubDelivery('x'.repeat(1024 * 1024 + 1)), 413, 'body_too_large'],
    ];
    for (const [at, request, status, code] of cases) {
      const res = await fetch(at, request);
      expect({ at, status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code }).toEqual({ at, status, code });
    }
    expect((await stored()).length).toBe(before);
  });

  test('the webhook secret is a credential: not in the integration unless credentials are asked for', async () => {
    const plain = await stack.api('GET', '/integrations/github');
    expect(JSON.stringify(plain.body)).not.toContain(SECRET);
    const withCredentials = await stack.api('GET', '/integrations/github?include=credentials');
    expect(withCredentials.body.data.credentials.webhook_secret).toBe(SECRET);
    expect(stack.logs.join('\n')).not.toContain(SECRET);
  });
});

describe("the intake's limits", () => {
  test('an integration past WEFT_PROVIDER_WEBHOOK_RATE_LIMIT verified deliveries a minute gets 429 with Retry-After; forged ones do not use its budget', async () => {
    const stack = await startWeftStack({ github: { seed: 8 }, worker: false, env: { WEFT_PROVIDER_WEBHOOK_RATE_LIMIT: '3' } });
    try {
      await createGitHubIntegration(stack, 'github', { webhookSecret: SECRET });
      const url = `${stack.apiUrl}/webhooks/providers/dev/github`;
      const body = JSON.stringify({ action: 'opened', installation: { id: 1001 } });
      // Forged deliveries first: refused, and not counted against the integration.
      for (let i = 0; i < 5; i++) expect((await fetch(url, githubDelivery(body, { secret: 'forged-secret-0123456789' }))).status).toBe(401);
      // Windows follow the clock's minutes: seven deliveries see a refusal even if they straddle two.
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        const res = await fetch(url, githubDelivery(body));
        statuses.push(res.status);
        if (res.status === 429) {
          expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
          expect(((await res.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
        }
      }
      expect(statuses.slice(0, 3)).toEqual([202, 202, 202]);
      expect(statuses).toContain(429);
      expect(statuses.every((s) => s === 202 || s === 429)).toBe(true);
      // The refused ones are stored nowhere.
      expect(await stack.core.stores.db.collection('provider_deliveries').countDocuments({})).toBe(statuses.filter((s) => s === 202).length);
    } finally {
      await stack.shutdown();
    }
  });
});
