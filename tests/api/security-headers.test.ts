import { createHash } from 'node:crypto';
import { LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * Security headers (helmet): a strict Content-Security-Policy everywhere, the pages' inline
 * style and script allowed by hash only, no framing, and `Cache-Control: no-store` on every
 * answer that carries a credential or a session token.
 */
describe('security headers', () => {
  let stack: WeftStack;
  let sessionToken: string;

  beforeAll(async () => {
    stack = await startWeftStack({ worker: false });
    await createLumaIntegration(stack);
    const created = await stack.api('POST', '/integrations', {
      body: { unique_key: 'one-drive', provider: 'one-drive', credentials: { type: 'OAUTH2', client_id: 'client-abc', client_secret: 'secret-xyz' } },
    });
    expect(created.status).toBe(201);
    const conn = await stack.api('POST', '/connections', {
      body: { provider_config_key: 'luma', connection_id: 'u1', credentials: { type: 'API_KEY', apiKey: LUMA_DEFAULT_API_KEY } },
    });
    expect(conn.status).toBe(201);
  });
  afterAll(async () => {
    await stack?.shutdown();
  });

  async function call(
    method: string,
    path: string,
    opts: { body?: unknown; form?: Record<string, string>; key?: string | null } = {},
  ): Promise<{ res: Response; text: string }> {
    const headers: Record<string, string> = {};
    if (opts.key !== null) headers.authorization = `Bearer ${opts.key ?? stack.keys.dev}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    } else if (opts.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(opts.form).toString();
    }
    const res = await fetch(`${stack.apiUrl}${path}`, { method, headers, body, redirect: 'manual' });
    return { res, text: await res.text() };
  }

  async function newSessionToken(): Promise<string> {
    const { res, text } = await call('POST', '/connect/sessions', { body: { allowed_integrations: ['luma'] } });
    expect(res.status).toBe(201);
    return JSON.parse(text).data.token;
  }

  function csp(res: Response): Map<string, string[]> {
    const value = res.headers.get('content-security-policy') ?? '';
    return new Map(
      value
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .filter((parts) => parts[0])
        .map(([name, ...sources]) => [name, sources]),
    );
  }

  const sha256 = (content: string) => `'sha256-${createHash('sha256').update(content, 'utf8').digest('base64')}'`;

  /** Headers every response gets, page or JSON. */
  function expectHardened(res: Response) {
    const policy = csp(res);
    expect(policy.get('default-src')).toEqual(["'none'"]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expect(res.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    // The Connect page runs in the app's popup: the opener link must survive.
    expect(res.headers.get('cross-origin-opener-policy')).toBeNull();
  }

  /** A page's inline <script> and <style> must be exactly what the policy allows by hash. */
  function expectInlineAllowedByHash(res: Response, html: string) {
    const policy = csp(res);
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
    const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]);
    expect(styles).toHaveLength(1);
    for (const s of scripts) expect(policy.get('script-src')).toContain(sha256(s));
    for (const s of styles) expect(policy.get('style-src')).toContain(sha256(s));
    return { scripts, styles };
  }

  test('responses that carry credentials or secrets are never stored', async () => {
    const connection = await call('GET', '/connections/u1?provider_config_key=luma');
    expect(connection.res.status).toBe(200);
    expect(JSON.parse(connection.text).credentials).toMatchObject({ apiKey: LUMA_DEFAULT_API_KEY });
    expectHardened(connection.res);

    const integration = await call('GET', '/integrations/one-drive?include=credentials');
    expect(JSON.parse(integration.text).data.credentials).toMatchObject({ client_secret: 'secret-xyz' });
    expectHardened(integration.res);

    const session = await call('POST', '/connect/sessions', { body: { allowed_integrations: ['luma'] } });
    expect(session.res.status).toBe(201);
    expectHardened(session.res);

    const rotated = await call('POST', '/environment/webhook-signing-key/rotate');
    expect(rotated.res.status).toBe(200);
    expectHardened(rotated.res);

    const apiKeyJson = await call('POST', `/api-auth/api-key/luma?connect_session_token=${encodeURIComponent(await newSessionToken())}`, {
      key: null,
      body: { apiKey: LUMA_DEFAULT_API_KEY },
    });
    expect(apiKeyJson.res.status).toBe(201);
    expectHardened(apiKeyJson.res);
  });

  test('the Connect page (it embeds the session token) and the result pages: CSP by hash, no framing, no-store', async () => {
    sessionToken = await newSessionToken();
    const page = await call('GET', `/connect?session_token=${encodeURIComponent(sessionToken)}`, { key: null });
    expect(page.res.status).toBe(200);
    expect(page.text).toContain(sessionToken);
    expectHardened(page.res);
    expectInlineAllowedByHash(page.res, page.text);
    expect(csp(page.res).get('form-action')).toEqual(["'self'"]);

    const connected = await call('POST', '/connect/api-key/luma', { key: null, form: { connect_session_token: sessionToken, apiKey: LUMA_DEFAULT_API_KEY } });
    expect(connected.res.status).toBe(200);
    expect(connected.text).toContain('data-result="success"');
    expectHardened(connected.res);
    const { scripts } = expectInlineAllowedByHash(connected.res, connected.text);
    expect(scripts).toHaveLength(1); // the popup-closing script, allowed by its hash

    const failedOAuth = await call('GET', '/oauth/callback?state=not-a-state&code=abc', { key: null });
    expect(failedOAuth.res.status).toBeGreaterThanOrEqual(400);
    expect(failedOAuth.res.status).toBeLessThan(500);
    expect(failedOAuth.res.headers.get('content-type')).toMatch(/text\/html/);
    expectHardened(failedOAuth.res);
    expectInlineAllowedByHash(failedOAuth.res, failedOAuth.text);
  });

  test('JSON answers get the same hardening, errors included', async () => {
    for (const [method, path, key] of [
      ['GET', '/integrations', undefined],
      ['GET', '/integrations', null],
      ['GET', '/no-such-route', undefined],
      ['GET', '/health', null],
    ] as const) {
      const { res } = await call(method, path, { key });
      expectHardened(res);
    }
    // A body the parser refuses is answered before any router: it is hardened too.
    const refused = await fetch(`${stack.apiUrl}/integrations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.keys.dev}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(refused.status).toBe(400);
    expectHardened(refused);
  });
});
