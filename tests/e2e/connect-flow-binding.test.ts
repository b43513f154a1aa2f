import { createGitHubIntegration, createLumaIntegration, connectGitHub, startWeftStack, type WeftStack } from '../support/weft-stack';

/** A browser's cookie jar for Weft's own pages, by hand: enough to tell two browsers apart. */
class Jar {
  readonly cookies = new Map<string, string>();
  async get(url: string): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      this.cookies.set(pair.slice(0, i).trim(), pair.slice(i + 1).trim());
    }
    return res;
  }
}

function errorCode(html: string): string | null {
  return /data-error-code="([^"]+)"/.exec(html)?.[1] ?? null;
}

describe('connect flows are bound to the person connecting (v0)', () => {
  let stack: WeftStack;
  beforeAll(async () => {
    stack = await startWeftStack({ github: { seed: 3 } });
    await createGitHubIntegration(stack);
    await createLumaIntegration(stack);
    expect((await connectGitHub(stack, 'victim')).status).toBe(201);
  });
  afterAll(async () => stack?.shutdown());

  async function session(body: Record<string, unknown> = {}): Promise<string> {
    const res = await stack.api('POST', '/connect/sessions', { body });
    expect(res.status).toBe(201);
    return res.body.data.token;
  }

  test('connection_id in the connect URL is refused', async () => {
    const token = await session();
    const res = await new Jar().get(`${stack.apiUrl}/oauth/connect/github?connect_session_token=${token}&connection_id=victim`);
    expect(res.status).toBe(400);
    expect(errorCode(await res.text())).toBe('connection_id_not_allowed');
  });

  test('a reconnect session for a connection that does not exist is refused', async () => {
    const res = await stack.api('POST', '/connect/sessions', { body: { connection_id: 'ghost' } });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('unknown_connection');
  });

  test('flow start sets an HttpOnly SameSite=Lax cookie; a callback without it is refused', async () => {
    const jar = new Jar();
    const res = await jar.get(`${stack.apiUrl}/oauth/connect/github?connect_session_token=${await session()}`);
    expect(res.status).toBe(302);
    const cookie = res.headers.getSetCookie().join('\n');
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    const state = new URL(res.headers.get('location')!).searchParams.get('state');
    const other = await new Jar().get(`${stack.apiUrl}/app-auth/connect?installation_id=1001&setup_action=install&state=${state}`);
    expect(other.status).toBe(400);
    expect(errorCode(await other.text())).toBe('browser_mismatch');
  });

  test('a spoofed installation_id is not stored', async () => {
    const jar = new Jar();
    const before = (await stack.api('GET', '/connections?integrationId=github')).body.connections.length;
    const res = await jar.get(`${stack.apiUrl}/oauth/connect/github?connect_session_token=${await session()}`);
    const state = new URL(res.headers.get('location')!).searchParams.get('state');
    const cb = await jar.get(`${stack.apiUrl}/app-auth/connect?installation_id=1001&setup_action=install&state=${state}`);
    expect(errorCode(await cb.text())).toBe('installation_not_verified');
    expect((await stack.api('GET', '/connections?integrationId=github')).body.connections.length).toBe(before);
  });

  test('attempts are capped at 10 per session, also under concurrency', async () => {
    const token = await session();
    const results = await Promise.all(Array.from({ length: 25 }, () => new Jar().get(`${stack.apiUrl}/oauth/connect/github?connect_session_token=${token}`)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 302)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
  });
});
