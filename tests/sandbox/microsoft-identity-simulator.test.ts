import crypto from 'node:crypto';
import { decodeJwt, importJWK, jwtVerify } from 'jose';
import {
  createMicrosoftIdentitySimulator,
  MicrosoftIdentitySimulatorOptionsSchema,
  MS_IDENTITY_DEFAULT_ADMIN_PASSWORD,
  MS_IDENTITY_DEFAULT_CLIENT_ID,
  MS_IDENTITY_DEFAULT_CLIENT_SECRET,
  MS_IDENTITY_DEFAULT_USER_PASSWORD,
  type AccessTokenEvent,
  type MicrosoftIdentitySimulator,
  type MicrosoftIdentitySimulatorOptions,
} from '../../sandbox/microsoft-identity';

type Json = Record<string, any>;

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const REDIRECT = 'http://127.0.0.1:9/oauth/callback';
const CLIENT_ID = MS_IDENTITY_DEFAULT_CLIENT_ID;
const SECRET = MS_IDENTITY_DEFAULT_CLIENT_SECRET;
const ADMIN = { username: 'admin@contoso.onmicrosoft.com', password: MS_IDENTITY_DEFAULT_ADMIN_PASSWORD };
const USER = { username: 'user@contoso.onmicrosoft.com', password: MS_IDENTITY_DEFAULT_USER_PASSWORD };
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const running: MicrosoftIdentitySimulator[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

/** A simulator on a manual clock (`clock.t`, epoch ms) with REDIRECT registered on the default app. */
async function startSim(options: MicrosoftIdentitySimulatorOptions = {}) {
  const clock = { t: T0 };
  const issued: AccessTokenEvent[] = [];
  const revoked: AccessTokenEvent[] = [];
  const sim = createMicrosoftIdentitySimulator({
    now: () => clock.t,
    defaultApp: { redirectUris: [REDIRECT] },
    onAccessToken: (e) => issued.push(e),
    onAccessTokenRevoked: (e) => revoked.push(e),
    ...options,
  });
  running.push(sim);
  await sim.start();
  return { sim, clock, issued, revoked, browser: new Browser() };
}

// ---------------------------------------------------------------------------------------
// A tiny "browser": a cookie jar, manual redirects, and form posting from the HTML.
// ---------------------------------------------------------------------------------------

function unescapeHtml(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

interface Page {
  res: Response;
  html: string;
  url: string;
}

class Browser {
  private readonly cookies = new Map<string, string>();

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      if (attrs.some((a) => /max-age=0/i.test(a.trim()))) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1).trim());
    }
    return res;
  }

  async open(url: string): Promise<Page> {
    const res = await this.fetch(url);
    return { res, html: await res.text(), url };
  }

  /** Posts the page's form: its hidden fields plus `fields`. */
  async submit(page: Page, fields: Record<string, string>): Promise<Page> {
    const action = /<form method="post" action="([^"]+)"/.exec(page.html)?.[1];
    if (!action) throw new Error(`no form on page:\n${page.html}`);
    const form = new URLSearchParams();
    for (const m of page.html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) form.set(m[1], unescapeHtml(m[2]));
    for (const [k, v] of Object.entries(fields)) form.set(k, v);
    const url = new URL(unescapeHtml(action), page.url).toString();
    const res = await this.fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
    return { res, html: await res.text(), url };
  }
}

function pageKind(page: Page): string | undefined {
  return /data-page="([^"]+)"/.exec(page.html)?.[1];
}

/** The parameters of a redirect back to REDIRECT. */
function callback(page: Page): URLSearchParams {
  expect(page.res.status).toBe(302);
  const location = page.res.headers.get('location')!;
  expect(location.startsWith(REDIRECT + '?')).toBe(true);
  return new URL(location).searchParams;
}

function pkce(method: 'S256' | 'plain' = 'S256') {
  const verifier = crypto.randomBytes(48).toString('base64url');
  const challenge = method === 'S256' ? crypto.createHash('sha256').update(verifier).digest('base64url') : verifier;
  return { verifier, challenge, method };
}

interface AuthorizeParams {
  scope: string;
  prompt?: string;
  state?: string;
  pkce?: { challenge: string; method: string } | null;
  redirectUri?: string;
  clientId?: string;
  tenant?: string;
}

function authorizeUrl(sim: MicrosoftIdentitySimulator, p: AuthorizeParams): string {
  const q = new URLSearchParams({
    client_id: p.clientId ?? CLIENT_ID,
    response_type: 'code',
    redirect_uri: p.redirectUri ?? REDIRECT,
    scope: p.scope,
    state: p.state ?? 'st-123',
  });
  if (p.prompt) q.set('prompt', p.prompt);
  if (p.pkce) {
    q.set('code_challenge', p.pkce.challenge);
    q.set('code_challenge_method', p.pkce.method);
  }
  return `${sim.endpoints(p.tenant ?? 'organizations').authorize}?${q}`;
}

/** Authorize → sign in (if asked) → accept consent (if asked); returns the final page (the 302). */
async function consentFlow(
  sim: MicrosoftIdentitySimulator,
  browser: Browser,
  p: AuthorizeParams,
  who: { username: string; password: string } = ADMIN,
): Promise<Page> {
  let page = await browser.open(authorizeUrl(sim, p));
  if (pageKind(page) === 'sign-in') page = await browser.submit(page, { loginfmt: who.username, passwd: who.password });
  if (pageKind(page) === 'consent') page = await browser.submit(page, { action: 'accept' });
  return page;
}

async function getCode(
  sim: MicrosoftIdentitySimulator,
  browser: Browser,
  scope: string,
  who = ADMIN,
  method: 'S256' | 'plain' = 'S256',
): Promise<{ code: string; verifier: string }> {
  const p = pkce(method);
  const page = await consentFlow(sim, browser, { scope, pkce: p }, who);
  const params = callback(page);
  expect(params.get('state')).toBe('st-123');
  return { code: params.get('code')!, verifier: p.verifier };
}

async function token(
  sim: MicrosoftIdentitySimulator,
  fields: Record<string, string>,
  o: { basic?: boolean; secret?: string | null; tenant?: string } = {},
): Promise<{ status: number; body: Json }> {
  const form = new URLSearchParams(fields);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const secret = o.secret === undefined ? SECRET : o.secret;
  if (o.basic) {
    headers.authorization = 'Basic ' + Buffer.from(`${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(secret ?? '')}`).toString('base64');
  } else {
    if (!form.has('client_id')) form.set('client_id', CLIENT_ID);
    if (secret !== null) form.set('client_secret', secret);
  }
  const res = await fetch(sim.endpoints(o.tenant ?? 'organizations').token, { method: 'POST', headers, body: form.toString() });
  return { status: res.status, body: (await res.json()) as Json };
}

function redeem(sim: MicrosoftIdentitySimulator, code: string, verifier: string, extra: Record<string, string> = {}) {
  return token(sim, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, ...extra });
}

function refresh(sim: MicrosoftIdentitySimulator, refreshToken: string, extra: Record<string, string> = {}) {
  return token(sim, { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra });
}

/** Asserts the AADSTS error shape and returns the AADSTS number. */
function expectAadError(r: { status: number; body: Json }, status: number, error: string, code: number): void {
  expect(r.status).toBe(status);
  expect(r.body.error).toBe(error);
  expect(r.body.error_codes).toEqual([code]);
  expect(r.body.error_description).toMatch(
    new RegExp(
      `^AADSTS${code}: .+\\r\\nTrace ID: [0-9a-f-]{36}\\r\\nCorrelation ID: [0-9a-f-]{36}\\r\\nTimestamp: \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\dZ$`,
      's',
    ),
  );
  expect(r.body.timestamp).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/);
  expect(r.body.trace_id).toMatch(GUID);
  expect(r.body.correlation_id).toMatch(GUID);
  expect(r.body.error_uri).toBe(`https://login.microsoftonline.com/error?code=${code}`);
}

// ---------------------------------------------------------------------------------------

describe('Microsoft identity simulator', () => {
  test('options are validated strictly', () => {
    expect(() => MicrosoftIdentitySimulatorOptionsSchema.parse({ bogus: 1 })).toThrow();
    expect(() => MicrosoftIdentitySimulatorOptionsSchema.parse({ apps: [{ clientId: 'not-a-guid' }] })).toThrow();
    const o = MicrosoftIdentitySimulatorOptionsSchema.parse({});
    expect(o.adminConsentScopes).toEqual(['Sites.Read.All', 'User.Read.All']);
    expect(o.accessTokenLifetimeSeconds).toBe(3600);
  });

  test('full authorization code + PKCE flow: sign-in page, consent page, tokens', async () => {
    const { sim, browser, issued } = await startSim();
    let page = await browser.open(authorizeUrl(sim, { scope: 'openid profile offline_access User.Read Files.Read.All', pkce: pkce() }));
    expect(page.res.status).toBe(200);
    expect(pageKind(page)).toBe('sign-in');
    expect(page.html).toContain('<label for="loginfmt">Username</label>');
    expect(page.html).toContain('<label for="passwd">Password</label>');
    expect(page.html).toContain('>Sign in</button>');

    // A wrong password re-renders the page with an error.
    page = await browser.submit(page, { loginfmt: ADMIN.username, passwd: 'nope' });
    expect(pageKind(page)).toBe('sign-in');
    expect(page.html).toMatch(/role="alert">Your account or password is incorrect/);

    const verifierPair = pkce();
    page = await browser.open(authorizeUrl(sim, { scope: 'openid profile offline_access User.Read Files.Read.All', pkce: verifierPair }));
    page = await browser.submit(page, { loginfmt: ADMIN.username, passwd: ADMIN.password });
    expect(pageKind(page)).toBe('consent');
    const listed = [...page.html.matchAll(/data-scope="([^"]+)"/g)].map((m) => m[1]);
    expect(listed).toEqual(['User.Read', 'Files.Read.All', 'openid', 'profile', 'offline_access']);
    expect(page.html).toContain('>Accept</button>');
    expect(page.html).toContain('>Cancel</button>');

    page = await browser.submit(page, { action: 'accept' });
    const params = callback(page);
    expect(params.get('state')).toBe('st-123');
    const code = params.get('code')!;
    expect(code.length).toBeGreaterThan(40);

    const r = await redeem(sim, code, verifierPair.verifier);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['token_type', 'scope', 'expires_in', 'ext_expires_in', 'access_token', 'refresh_token', 'id_token']);
    expect(r.body.token_type).toBe('Bearer');
    expect(r.body.scope).toBe('Files.Read.All User.Read openid profile offline_access');
    expect(r.body.expires_in).toBe(3600);
    expect(r.body.ext_expires_in).toBe(3600);
    expect(sim.isAccessTokenValid(r.body.access_token)).toBe(true);
    expect(sim.isAccessTokenValid('garbage')).toBe(false);

    // The ID token is an RS256 JWT verifiable with the published keys.
    const claims = decodeJwt(r.body.id_token);
    const admin = sim.users().find((u) => u.username === ADMIN.username)!;
    expect(claims).toMatchObject({ aud: CLIENT_ID, tid: sim.tenant.id, oid: admin.id, preferred_username: ADMIN.username, name: 'Sandbox Admin', ver: '2.0' });
    expect(claims.iss).toBe(`${sim.url}/${sim.tenant.id}/v2.0`);
    const jwks = (await (await fetch(`${sim.authority()}/discovery/v2.0/keys`)).json()) as Json;
    await expect(jwtVerify(r.body.id_token, await importJWK(jwks.keys[0], 'RS256'), { currentDate: new Date(T0) })).resolves.toBeDefined();

    expect(issued).toHaveLength(1);
    expect(issued[0]).toMatchObject({
      token: r.body.access_token,
      resource: 'graph',
      scopes: ['Files.Read.All', 'User.Read'],
      userId: admin.id,
      clientId: CLIENT_ID,
      expiresAt: T0 + 3_600_000,
    });
    expect(issued[0].host).toBeUndefined();

    const stats = sim.stats();
    expect(stats.tokenRequests).toEqual({ authorization_code: 1, refresh_token: 0, other: 0 });
    expect(stats.signIns).toEqual({ succeeded: 1, failed: 1 });

    // Nothing secret in the request log.
    const logText = JSON.stringify(sim.requestLog());
    for (const secret of [code, verifierPair.verifier, SECRET, ADMIN.password, r.body.access_token, r.body.refresh_token]) {
      expect(logText).not.toContain(secret);
    }
    expect(logText).toContain('[redacted]');
  });

  test('an authorization code is single use (AADSTS54005) and bound to its redirect URI', async () => {
    const { sim, browser } = await startSim();
    const { code, verifier } = await getCode(sim, browser, 'User.Read offline_access');
    const mismatch = await redeem(sim, code, verifier, { redirect_uri: 'http://127.0.0.1:9/other' });
    expectAadError(mismatch, 400, 'invalid_grant', 500112);
    expect((await redeem(sim, code, verifier)).status).toBe(200);
    expectAadError(await redeem(sim, code, verifier), 400, 'invalid_grant', 54005);
    expectAadError(await redeem(sim, 'not-a-code', verifier), 400, 'invalid_grant', 70000);
    expect(sim.stats().errors).toMatchObject({ 54005: 1, 500112: 1, 70000: 1 });
  });

  test('PKCE: a wrong verifier is AADSTS501481; plain challenges work too', async () => {
    const { sim, browser } = await startSim();
    const { code, verifier } = await getCode(sim, browser, 'User.Read');
    expectAadError(await redeem(sim, code, pkce().verifier), 400, 'invalid_grant', 501481);
    expectAadError(await redeem(sim, code, 'short'), 400, 'invalid_grant', 501481);
    expect((await redeem(sim, code, verifier)).status).toBe(200);

    const plain = await getCode(sim, browser, 'User.Read', ADMIN, 'plain');
    expect((await redeem(sim, plain.code, plain.verifier)).status).toBe(200);
  });

  test('an authorization code expires after 10 minutes (AADSTS70008)', async () => {
    const { sim, browser, clock } = await startSim();
    const a = await getCode(sim, browser, 'User.Read');
    const b = await getCode(sim, browser, 'User.Read');
    clock.t += 9 * 60_000;
    expect((await redeem(sim, a.code, a.verifier)).status).toBe(200);
    clock.t += 60_000;
    expectAadError(await redeem(sim, b.code, b.verifier), 400, 'invalid_grant', 70008);
  });

  test('bad client, redirect URI or tenant are shown as pages, never redirected', async () => {
    const { sim, browser } = await startSim();
    const wrongRedirect = await browser.open(authorizeUrl(sim, { scope: 'User.Read', redirectUri: 'http://127.0.0.1:9/evil' }));
    expect(wrongRedirect.res.status).toBe(400);
    expect(wrongRedirect.res.headers.get('location')).toBeNull();
    expect(wrongRedirect.html).toContain('data-error-code="AADSTS50011"');
    expect(wrongRedirect.html).toMatch(/AADSTS50011: The redirect URI &#39;http:\/\/127\.0\.0\.1:9\/evil&#39; specified in the request does not match/);

    const unknownClient = await browser.open(authorizeUrl(sim, { scope: 'User.Read', clientId: crypto.randomUUID() }));
    expect(unknownClient.html).toContain('AADSTS700016');
    const unknownTenant = await browser.open(authorizeUrl(sim, { scope: 'User.Read', tenant: 'fabrikam.onmicrosoft.com' }));
    expect(unknownTenant.html).toContain('AADSTS90002');

    // Tenant forms that work: the GUID, the domain, common, consumers.
    for (const t of [sim.tenant.id, 'contoso.onmicrosoft.com', 'common', 'consumers']) {
      expect(pageKind(await new Browser().open(authorizeUrl(sim, { scope: 'User.Read', tenant: t })))).toBe('sign-in');
    }
    expectAadError(
      await token(sim, { grant_type: 'refresh_token', refresh_token: 'x' }, { tenant: 'fabrikam.onmicrosoft.com' }),
      400,
      'invalid_request',
      90002,
    );
  });

  test('.default mixed with named scopes is AADSTS70011; one resource per token request (AADSTS700022)', async () => {
    const { sim, browser } = await startSim();
    const mixed = await browser.open(authorizeUrl(sim, { scope: 'https://graph.microsoft.com/.default Mail.Read' }));
    const params = callback(mixed);
    expect(params.get('error')).toBe('invalid_scope');
    expect(params.get('error_description')).toMatch(/^AADSTS70011: .*static scope limit exceeded\.\r\nTrace ID: /);
    expect(params.get('state')).toBe('st-123');
    expect(params.get('code')).toBeNull();

    // OIDC scopes next to one .default are fine; .default stands for the app's registered permissions.
    const { code, verifier } = await getCode(sim, browser, 'https://graph.microsoft.com/.default openid profile offline_access');
    const r = await redeem(sim, code, verifier);
    expect(r.status).toBe(200);
    expect(r.body.scope).toBe('Files.Read.All Sites.Read.All User.Read openid profile offline_access');

    expectAadError(await refresh(sim, r.body.refresh_token, { scope: 'https://graph.microsoft.com/.default User.Read' }), 400, 'invalid_scope', 70011);
    expectAadError(await refresh(sim, r.body.refresh_token, { scope: 'User.Read https://contoso.sharepoint.com/AllSites.Read' }), 400, 'invalid_scope', 700022);
    expectAadError(await refresh(sim, r.body.refresh_token, { scope: 'https://unknown.example.com/.default' }), 400, 'invalid_resource', 500011);
  });

  test('no offline_access → no refresh token; no openid → no id token', async () => {
    const { sim, browser } = await startSim();
    const { code, verifier } = await getCode(sim, browser, 'User.Read');
    const r = await redeem(sim, code, verifier);
    expect(r.status).toBe(200);
    expect(r.body.scope).toBe('User.Read');
    expect(r.body.refresh_token).toBeUndefined();
    expect(r.body.id_token).toBeUndefined();
  });

  test('refresh tokens rotate; the old one stays valid until revoked (AADSTS50173) or expired (AADSTS70008)', async () => {
    const { sim, browser, clock } = await startSim();
    const { code, verifier } = await getCode(sim, browser, 'User.Read Files.Read.All offline_access');
    const first = (await redeem(sim, code, verifier)).body;
    clock.t += 1000;

    const second = await refresh(sim, first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).toBeDefined();
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(second.body.access_token).not.toBe(first.access_token);
    expect(second.body.scope).toBe('Files.Read.All User.Read offline_access');

    // The old refresh token still works; HTTP Basic client authentication too.
    const old = await refresh(sim, first.refresh_token);
    expect(old.status).toBe(200);
    const basic = await token(sim, { grant_type: 'refresh_token', refresh_token: second.body.refresh_token, scope: 'User.Read' }, { basic: true });
    expect(basic.status).toBe(200);
    expect(basic.body.scope).toBe('Files.Read.All User.Read');

    // A scope never consented.
    const unconsented = await refresh(sim, first.refresh_token, { scope: 'Mail.Read offline_access' });
    expectAadError(unconsented, 400, 'invalid_grant', 65001);
    expect(unconsented.body.suberror).toBe('consent_required');
    expect(sim.stats().tokenRequests.refresh_token).toBe(4);

    sim.revokeRefreshTokens(ADMIN.username);
    expectAadError(await refresh(sim, second.body.refresh_token), 400, 'invalid_grant', 50173);
    // Revocation also ended the SSO session.
    expect(pageKind(await browser.open(authorizeUrl(sim, { scope: 'User.Read' })))).toBe('sign-in');

    const fresh = await getCode(sim, browser, 'User.Read offline_access');
    const rt = (await redeem(sim, fresh.code, fresh.verifier)).body.refresh_token;
    expect((await refresh(sim, rt)).status).toBe(200);
    sim.expireRefreshTokens();
    expectAadError(await refresh(sim, rt), 400, 'invalid_grant', 70008);
    expectAadError(await refresh(sim, 'garbage'), 400, 'invalid_grant', 9002313);
  });

  test('team-site token: refresh with https://{sharepointHost}/.default after consent to Sites.Read.All', async () => {
    const { sim, browser, issued } = await startSim();
    expect(sim.sharePointHost).toBe('contoso.sharepoint.com');
    const { code, verifier } = await getCode(sim, browser, 'User.Read Files.Read.All Sites.Read.All offline_access');
    const graph = (await redeem(sim, code, verifier)).body;

    const sp = await refresh(sim, graph.refresh_token, { scope: 'https://contoso.sharepoint.com/.default' });
    expect(sp.status).toBe(200);
    expect(sp.body.scope).toBe('https://contoso.sharepoint.com/AllSites.Read https://contoso.sharepoint.com/MyFiles.Read');
    expect(sp.body.refresh_token).toBeDefined();
    expect(issued.at(-1)).toMatchObject({ resource: 'sharepoint', host: 'contoso.sharepoint.com', scopes: ['AllSites.Read', 'MyFiles.Read'] });
    expect(sim.accessTokenInfo(sp.body.access_token)).toMatchObject({ resource: 'sharepoint', valid: true });

    // The host follows what the Graph simulator reports (wired elsewhere).
    sim.setSharePointHost('https://fabrikam.sharepoint.com');
    expectAadError(await refresh(sim, graph.refresh_token, { scope: 'https://contoso.sharepoint.com/.default' }), 400, 'invalid_resource', 500011);
    const moved = await refresh(sim, graph.refresh_token, { scope: 'https://fabrikam.sharepoint.com/.default offline_access' });
    expect(moved.body.scope).toBe('https://fabrikam.sharepoint.com/AllSites.Read https://fabrikam.sharepoint.com/MyFiles.Read offline_access');
    const oneDrive = await refresh(sim, graph.refresh_token, { scope: 'https://fabrikam-my.sharepoint.com/.default' });
    expect(issued.at(-1)).toMatchObject({ resource: 'sharepoint', host: 'fabrikam-my.sharepoint.com' });
    expect(oneDrive.status).toBe(200);

    // Without Sites.Read.All there is no SharePoint consent.
    const other = await getCode(sim, new Browser(), 'User.Read offline_access', USER);
    const userRt = (await redeem(sim, other.code, other.verifier)).body.refresh_token;
    const denied = await refresh(sim, userRt, { scope: 'https://fabrikam.sharepoint.com/.default' });
    expectAadError(denied, 400, 'invalid_grant', 65001);
  });

  test('non-admin asking for an admin-only scope: "Need admin approval" (AADSTS90094), then grantTenantWide lets it pass', async () => {
    const { sim, browser } = await startSim();
    let page = await browser.open(authorizeUrl(sim, { scope: 'User.Read Sites.Read.All offline_access', pkce: pkce() }));
    page = await browser.submit(page, { loginfmt: USER.username, passwd: USER.password });
    expect(pageKind(page)).toBe('admin-approval');
    expect(page.html).toContain('<h1 id="title">Need admin approval</h1>');
    expect(page.html).toContain('data-scope="Sites.Read.All"');
    expect(page.html).toContain('>Return to the application without granting consent</button>');
    page = await browser.submit(page, { action: 'return' });
    const location = page.res.headers.get('location')!;
    expect(location).toMatch(/^http:\/\/127\.0\.0\.1:9\/oauth\/callback\?error=access_denied&error_subcode=cancel&error_description=AADSTS90094/);
    const params = callback(page);
    expect(params.get('state')).toBe('st-123');
    expect(params.get('code')).toBeNull();

    sim.grantTenantWide(CLIENT_ID, ['Sites.Read.All']);
    // SSO: no sign-in page; the consent page asks only for what the user can grant.
    const p = pkce();
    page = await browser.open(authorizeUrl(sim, { scope: 'User.Read Sites.Read.All offline_access', pkce: p }));
    expect(pageKind(page)).toBe('consent');
    expect([...page.html.matchAll(/data-scope="([^"]+)"/g)].map((m) => m[1])).toEqual(['User.Read', 'offline_access']);
    page = await browser.submit(page, { action: 'accept' });
    const r = await redeem(sim, callback(page).get('code')!, p.verifier);
    expect(r.status).toBe(200);
    expect(r.body.scope).toBe('Sites.Read.All User.Read offline_access');
  });

  test('"Sign in with an admin account" from the approval page, with consent for the organization', async () => {
    const { sim, browser } = await startSim();
    let page = await browser.open(authorizeUrl(sim, { scope: 'User.Read.All' }));
    page = await browser.submit(page, { loginfmt: USER.username, passwd: USER.password });
    page = await browser.submit(page, { action: 'switch_account' });
    expect(pageKind(page)).toBe('sign-in');
    page = await browser.submit(page, { loginfmt: ADMIN.username, passwd: ADMIN.password });
    expect(pageKind(page)).toBe('consent');
    expect(page.html).toContain('Consent on behalf of your organization');
    page = await browser.submit(page, { action: 'accept', consent_on_behalf: 'true' });
    expect(callback(page).get('code')).toBeTruthy();
    expect(sim.grants().tenantWide).toEqual([{ clientId: CLIENT_ID, scopes: ['User.Read.All'] }]);
  });

  test('cancel on the consent page → access_denied with AADSTS65004', async () => {
    const { sim, browser } = await startSim();
    let page = await browser.open(authorizeUrl(sim, { scope: 'User.Read' }));
    page = await browser.submit(page, { loginfmt: USER.username, passwd: USER.password });
    const consentPage = page;
    page = await browser.submit(page, { action: 'cancel' });
    const params = callback(page);
    expect(params.get('error')).toBe('access_denied');
    expect(params.get('error_subcode')).toBe('cancel');
    expect(params.get('error_description')).toMatch(/^AADSTS65004: User declined to consent/);
    expect(sim.stats().consents).toEqual({ accepted: 0, declined: 1 });
    // The flow is over: re-posting the page cannot resurrect it.
    const again = await browser.submit(consentPage, { action: 'accept' });
    expect(again.res.status).toBe(400);
    expect(again.html).toContain('no longer valid');
  });

  test('SSO session and remembered consent; prompt=login, prompt=consent and prompt=none', async () => {
    const { sim, browser } = await startSim();
    await getCode(sim, browser, 'User.Read offline_access');

    // Second authorize: straight back with a code.
    const again = await browser.open(authorizeUrl(sim, { scope: 'User.Read offline_access' }));
    expect(callback(again).get('code')).toBeTruthy();

    const login = await browser.open(authorizeUrl(sim, { scope: 'User.Read', prompt: 'login' }));
    expect(pageKind(login)).toBe('sign-in');
    const afterLogin = await browser.submit(login, { loginfmt: ADMIN.username, passwd: ADMIN.password });
    expect(callback(afterLogin).get('code')).toBeTruthy();

    const consent = await browser.open(authorizeUrl(sim, { scope: 'User.Read', prompt: 'consent' }));
    expect(pageKind(consent)).toBe('consent');

    const silentOk = await browser.open(authorizeUrl(sim, { scope: 'User.Read', prompt: 'none' }));
    expect(callback(silentOk).get('code')).toBeTruthy();
    const silentNewScope = callback(await browser.open(authorizeUrl(sim, { scope: 'Mail.Read', prompt: 'none' })));
    expect(silentNewScope.get('error')).toBe('interaction_required');
    const silentNoSession = callback(await new Browser().open(authorizeUrl(sim, { scope: 'User.Read', prompt: 'none' })));
    expect(silentNoSession.get('error')).toBe('login_required');
    expect(silentNoSession.get('error_description')).toMatch(/^AADSTS50058: /);
  });

  test('client authentication: 401 invalid_client for a bad or missing secret', async () => {
    const { sim } = await startSim();
    const bad = await token(sim, { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT }, { secret: 'wrong' });
    expectAadError(bad, 401, 'invalid_client', 7000215);
    const missing = await token(sim, { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT }, { secret: null });
    expectAadError(missing, 401, 'invalid_client', 7000218);
    expectAadError(await token(sim, { grant_type: 'refresh_token', refresh_token: 'x' }, { basic: true, secret: 'wrong' }), 401, 'invalid_client', 7000215);
    const unknown = await token(sim, { grant_type: 'refresh_token', refresh_token: 'x', client_id: crypto.randomUUID() });
    expectAadError(unknown, 400, 'unauthorized_client', 700016);
    sim.expireClientSecret(CLIENT_ID);
    expectAadError(await token(sim, { grant_type: 'refresh_token', refresh_token: 'x' }), 401, 'invalid_client', 7000222);
  });

  test('failNext injects AADSTS error bodies on the token endpoint; access tokens can be expired', async () => {
    const { sim, browser, clock, revoked } = await startSim();
    const { code, verifier } = await getCode(sim, browser, 'User.Read offline_access');
    sim.failNext(1, 503);
    const failed = await redeem(sim, code, verifier);
    expectAadError(failed, 503, 'temporarily_unavailable', 90033);
    const r = await redeem(sim, code, verifier);
    expect(r.status).toBe(200);
    expect(sim.stats().tokenRequests.authorization_code).toBe(2);
    expect(sim.stats().injectedFailures).toBe(1);

    expect(sim.expireAccessTokens()).toBe(1);
    expect(revoked.map((e) => e.token)).toEqual([r.body.access_token]);
    expect(sim.isAccessTokenValid(r.body.access_token)).toBe(false);

    // Short lifetimes lapse by the clock and are announced at the next request.
    sim.setAccessTokenLifetime(2);
    const short = await refresh(sim, r.body.refresh_token);
    expect(short.body.expires_in).toBe(2);
    clock.t += 2000;
    expect(sim.isAccessTokenValid(short.body.access_token)).toBe(false);
    await fetch(`${sim.authority()}/v2.0/.well-known/openid-configuration`);
    expect(revoked.map((e) => e.token)).toEqual([r.body.access_token, short.body.access_token]);
  });

  test('response_mode fragment and form_post; login_hint pre-fills the username', async () => {
    const { sim, browser } = await startSim();
    const base = { client_id: CLIENT_ID, response_type: 'code', redirect_uri: REDIRECT, scope: 'User.Read', state: 's' };
    let page = await browser.open(`${sim.endpoints().authorize}?${new URLSearchParams({ ...base, response_mode: 'fragment', login_hint: USER.username })}`);
    const prefilled = /name="loginfmt"[^>]*value="([^"]*)"/.exec(page.html)![1];
    expect(prefilled).toBe(USER.username);
    page = await browser.submit(page, { loginfmt: prefilled, passwd: USER.password });
    page = await browser.submit(page, { action: 'accept' });
    const location = page.res.headers.get('location')!;
    expect(location.startsWith(`${REDIRECT}#code=`)).toBe(true);
    expect(new URLSearchParams(location.split('#')[1]).get('state')).toBe('s');

    const posted = await browser.open(`${sim.endpoints().authorize}?${new URLSearchParams({ ...base, response_mode: 'form_post' })}`);
    expect(posted.res.status).toBe(200);
    expect(posted.html).toContain(`<form method="post" action="${REDIRECT}" id="form_post">`);
    expect(posted.html).toMatch(/<input type="hidden" name="code" value="[^"]+">/);
    expect(posted.html).toContain('<input type="hidden" name="state" value="s">');

    const discovery = (await (await fetch(`${sim.authority('common')}/v2.0/.well-known/openid-configuration`)).json()) as Json;
    expect(discovery.token_endpoint).toBe(`${sim.url}/common/oauth2/v2.0/token`);
    expect(discovery.issuer).toBe(`${sim.url}/{tenantid}/v2.0`);
  });

  test('with the real clock, a lapsed access token is announced without any request', async () => {
    const revoked: AccessTokenEvent[] = [];
    const sim = createMicrosoftIdentitySimulator({ defaultApp: { redirectUris: [REDIRECT] }, onAccessTokenRevoked: (e) => revoked.push(e) });
    running.push(sim);
    await sim.start();
    sim.setAccessTokenLifetime(1);
    const { code, verifier } = await getCode(sim, new Browser(), 'User.Read');
    const r = await redeem(sim, code, verifier);
    expect(r.body.expires_in).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(revoked.map((e) => e.token)).toEqual([r.body.access_token]);
  });

  test('admin consent endpoint grants tenant-wide', async () => {
    const { sim, browser } = await startSim();
    const url = `${sim.endpoints('organizations').adminConsent}?${new URLSearchParams({
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT,
      scope: 'https://graph.microsoft.com/.default',
      state: 'ac',
    })}`;
    let page = await browser.open(url);
    page = await browser.submit(page, { loginfmt: ADMIN.username, passwd: ADMIN.password });
    expect(pageKind(page)).toBe('admin-consent');
    page = await browser.submit(page, { action: 'accept' });
    const params = callback(page);
    expect(params.get('admin_consent')).toBe('True');
    expect(params.get('tenant')).toBe(sim.tenant.id);
    expect(params.get('scope')).toBe(
      'https://graph.microsoft.com/User.Read https://graph.microsoft.com/Files.Read.All https://graph.microsoft.com/Sites.Read.All',
    );
    expect(params.get('state')).toBe('ac');

    // Now a non-admin gets through with admin-only Sites.Read.All.
    const user = await getCode(sim, new Browser(), 'Sites.Read.All', USER);
    expect((await redeem(sim, user.code, user.verifier)).body.scope).toBe('Files.Read.All Sites.Read.All User.Read');
  });
});
