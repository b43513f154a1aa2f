import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@temporalio/client';
import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from 'jose';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { ENCRYPTED_ENCODING } from '../../auth/payload-codec';
import { startApi } from '../../app/api/build-api';
import type { RunningApi } from '../../api/server';
import { actionWorkflowId } from '../../control';
import { createOneDriveIntegration, startWeftStack, testInfra, type WeftStack } from '../support/weft-stack';
import { GRAPH_DEFAULT_ACCESS_TOKEN } from '../../sandbox/graph';

const run = promisify(execFile);
const TEMPORAL_CLI = path.join(homedir(), '.cache', 'weft', 'bin', 'temporal');
const CONN = 'od-secrets';
const HEADERS = { 'connection-id': CONN, 'provider-config-key': 'one-drive' };
const CODEC_TOKEN = randomBytes(32).toString('base64url');
const UI_ORIGIN = 'http://localhost:8233';
/** The secret the team-site-token action returns: a SharePoint access token. */
const TEAM_SITE_TOKEN = `ts-${randomBytes(24).toString('hex')}`;

/**
 * What Weft writes to Temporal is encrypted (auth/payload-codec.ts), so a
 * history read without the key holds no secret, and operators read it through the codec
 * endpoint (api/routers/codec.ts) only with a configured token.
 */
describe('Temporal payloads are encrypted; the codec endpoint decodes them for operators', () => {
  let stack: WeftStack;
  let raw: Client;
  let drive: string;
  /** The Temporal UI's identity provider: its JWKS file, and a key that signs its users' access tokens. */
  let idp: { dir: string; key: KeyLike };

  /** Runs an action asynchronously (X-Async) and waits for its output; returns it and its workflow ID. */
  async function runAction(action: string, input: unknown): Promise<{ output: any; workflowId: string }> {
    const started = await stack.api('POST', '/action/trigger', { headers: { ...HEADERS, 'x-async': 'true' }, body: { action_name: action, input } });
    expect(started.status).toBe(202);
    const deadline = Date.now() + 120_000;
    for (;;) {
      const res = await stack.api('GET', `/action/${started.body.id}`);
      if (res.status === 200) return { output: res.body, workflowId: actionWorkflowId(stack.temporalIdPrefix, 'dev', started.body.id) };
      if (res.body?.error?.code !== 'action_pending' || Date.now() > deadline) throw new Error(`action ${action}: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /**
   * The history as Temporal stores it, read without the codec. Search attributes are set
   * aside: Temporal indexes them, so they are never encoded (Weft's hold IDs, no secret).
   */
  async function rawHistory(workflowId: string): Promise<{ events: unknown; searchAttributes: string[] }> {
    const searchAttributes: string[] = [];
    const events = JSON.parse(historyToJSON(await raw.workflow.getHandle(workflowId).fetchHistory()), (key, value) => {
      if (key !== 'searchAttributes') return value;
      searchAttributes.push(...Object.keys(value?.indexedFields ?? {}));
      return undefined;
    });
    return { events, searchAttributes };
  }

  /** A raw history as searchable text: its JSON and, for every base64 value in it (payload data and metadata), the decoded bytes. */
  function searchable(json: string): string {
    const decoded: string[] = [];
    try {
      JSON.parse(json, (_key, value) => {
        if (typeof value === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(value) && value.length % 4 === 0)
          decoded.push(Buffer.from(value, 'base64').toString('latin1'));
        return value;
      });
    } catch {
      // Not JSON (a CLI error): its text is all there is to search.
    }
    return [json, ...decoded].join('\n');
  }

  async function rawHistoryText(workflowId: string): Promise<string> {
    return searchable(JSON.stringify((await rawHistory(workflowId)).events));
  }

  /** Every payload of the history's events (search attributes aside), as the codec protocol carries them (base64 metadata and data). */
  async function rawPayloads(workflowId: string): Promise<Array<{ metadata: Record<string, string>; data: string }>> {
    const found: Array<{ metadata: Record<string, string>; data: string }> = [];
    JSON.parse(JSON.stringify((await rawHistory(workflowId)).events), (_key, value) => {
      if (value && typeof value === 'object' && value.metadata && typeof value.metadata === 'object' && 'data' in value) found.push(value);
      return value;
    });
    return found;
  }

  const codec = (url: string, direction: 'decode' | 'encode', body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}/codec/${direction}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-namespace': testInfra().namespace, ...headers },
      body: JSON.stringify(body),
    });
  const bearer = { authorization: `Bearer ${CODEC_TOKEN}` };
  const utf8 = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    idp = { dir: mkdtempSync(path.join(tmpdir(), 'weft-idp-')), key: pair.privateKey };
    writeFileSync(path.join(idp.dir, 'jwks.json'), JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'ui-1', alg: 'ES256' }] }));
    stack = await startWeftStack({
      graph: { seed: 24, drives: [{ fileCount: 5 }] },
      env: {
        WEFT_CODEC_ENDPOINT_ENABLED: 'true',
        WEFT_CODEC_ENDPOINT_TOKENS: `${randomBytes(32).toString('base64url')},${CODEC_TOKEN}`,
        WEFT_CODEC_ENDPOINT_CORS_ORIGINS: `${UI_ORIGIN},http://127.0.0.1:8233`,
        WEFT_CODEC_ENDPOINT_JWKS_FILE: path.join(idp.dir, 'jwks.json'),
        WEFT_CODEC_ENDPOINT_JWT_ISSUER: 'https://idp.example.com/',
        WEFT_CODEC_ENDPOINT_JWT_AUDIENCE: 'temporal-ui',
      },
    });
    raw = new Client({ connection: stack.temporal.connection, namespace: testInfra().namespace });
    await createOneDriveIntegration(stack);
    const connected = await stack.api('POST', '/connections', {
      body: {
        provider_config_key: 'one-drive',
        connection_id: CONN,
        credentials: { type: 'OAUTH2', access_token: GRAPH_DEFAULT_ACCESS_TOKEN },
        connection_config: { teamsiteAccessToken: TEAM_SITE_TOKEN, teamsiteAccessTokenExpiresAt: '2099-01-01T00:00:00.000Z' },
      },
    });
    expect(connected.status).toBe(201);
    drive = stack.graph.drives()[0].id as string;
  }, 300_000);
  afterAll(async () => {
    await stack?.shutdown();
    if (idp) rmSync(idp.dir, { recursive: true, force: true });
  });

  test('an action output (team-site token), fetch-file’s download URL and upload-file’s bytes are nowhere in the raw history; its payloads are binary/encrypted', async () => {
    const tokenRun = await runAction('team-site-token', {});
    expect(tokenRun.output).toMatchObject({ access_token: TEAM_SITE_TOKEN });

    const bytes = Buffer.from(`payroll ${randomBytes(48).toString('hex')}\n`.repeat(20));
    const upload = await runAction('upload-file', { driveId: drive, fileName: 'payroll.txt', content: bytes.toString('base64') });
    expect(upload.output).toMatchObject({ name: 'payroll.txt', size: bytes.length });

    const fetched = await runAction('fetch-file', { driveId: drive, itemId: upload.output.id });
    const downloadUrl: string = fetched.output.download_url;
    expect(downloadUrl).toMatch(/^http/);
    // The URL's secret part: its query (Graph's tempauth), else its path.
    const urlSecret = new URL(downloadUrl).search.slice(1) || new URL(downloadUrl).pathname;
    expect(urlSecret.length).toBeGreaterThan(8);

    const histories = {
      token: await rawHistoryText(tokenRun.workflowId),
      upload: await rawHistoryText(upload.workflowId),
      fetch: await rawHistoryText(fetched.workflowId),
    };
    const all = Object.values(histories).join('\n');
    expect(all).not.toContain(TEAM_SITE_TOKEN);
    expect(all).not.toContain(urlSecret);
    expect(all).not.toContain(bytes.toString('base64').slice(0, 64));
    expect(all).not.toContain(bytes.toString('utf8').slice(0, 64));
    expect(all).not.toContain('json/plain');
    // Search attributes stay readable (Temporal indexes them): Weft's hold names and IDs only.
    expect((await rawHistory(tokenRun.workflowId)).searchAttributes.length).toBeGreaterThan(0);
    // What is there: encrypted payloads, in every history.
    for (const [name, text] of Object.entries(histories)) expect({ name, encrypted: text.includes(ENCRYPTED_ENCODING) }).toEqual({ name, encrypted: true });
  }, 300_000);

  test('the codec endpoint decodes them with a configured token; without one, or with a wrong one, 401; each call logged without payloads', async () => {
    const { workflowId } = await runAction('team-site-token', {});
    const payloads = await rawPayloads(workflowId);
    const encrypted = payloads.filter((p) => p.metadata.encoding && utf8(p.metadata.encoding) === ENCRYPTED_ENCODING);
    expect(encrypted.length).toBeGreaterThan(0);
    expect(encrypted.length).toBe(payloads.length);

    const decoded = await codec(stack.apiUrl, 'decode', { payloads: encrypted }, bearer);
    expect(decoded.status).toBe(200);
    const body = (await decoded.json()) as { payloads: Array<{ metadata: Record<string, string>; data: string }> };
    expect(body.payloads).toHaveLength(encrypted.length);
    expect(body.payloads.every((p) => utf8(p.metadata.encoding) === 'json/plain')).toBe(true);
    expect(body.payloads.map((p) => utf8(p.data)).join('\n')).toContain(TEAM_SITE_TOKEN);

    // Encode is the inverse: what it returns decodes to what was sent.
    const plain = { metadata: { encoding: Buffer.from('json/plain').toString('base64') }, data: Buffer.from('"hello"').toString('base64') };
    const encoded = (await (await codec(stack.apiUrl, 'encode', { payloads: [plain] }, bearer)).json()) as typeof body;
    expect(utf8(encoded.payloads[0].metadata.encoding)).toBe(ENCRYPTED_ENCODING);
    const back = (await (await codec(stack.apiUrl, 'decode', encoded, bearer)).json()) as typeof body;
    expect(back.payloads).toEqual([plain]);

    for (const headers of [
      {} as Record<string, string>,
      { authorization: `Bearer ${CODEC_TOKEN.slice(0, -1)}x` },
      { authorization: CODEC_TOKEN },
      { authorization: 'Bearer ' },
    ]) {
      const refused = await codec(stack.apiUrl, 'decode', { payloads: encrypted }, headers);
      expect(refused.status).toBe(401);
      const text = await refused.text();
      expect(JSON.parse(text).error.code).toBe('codec_unauthorized');
      expect(text).not.toContain(TEAM_SITE_TOKEN);
    }

    // The UI's sign-in access token (a JWT of its identity provider) is accepted too.
    const accessToken = await new SignJWT({ sub: 'ops@example.com' })
      .setProtectedHeader({ alg: 'ES256', kid: 'ui-1' })
      .setIssuer('https://idp.example.com/')
      .setAudience('temporal-ui')
      .setExpirationTime('5m')
      .sign(idp.key);
    const viaUi = await codec(stack.apiUrl, 'decode', { payloads: encrypted }, { authorization: `Bearer ${accessToken}`, origin: UI_ORIGIN });
    expect(viaUi.status).toBe(200);
    expect(((await viaUi.json()) as typeof body).payloads.map((p) => utf8(p.data)).join('\n')).toContain(TEAM_SITE_TOKEN);

    const lines = stack.logs.filter((l) => l.includes('codec-endpoint'));
    const decodes = lines.map((l) => JSON.parse(l)).filter((l) => l.direction === 'decode');
    expect(decodes.length).toBeGreaterThanOrEqual(3);
    expect(decodes[0]).toMatchObject({ caller: 'codec token #2', namespace: testInfra().namespace, payloads: encrypted.length });
    expect(decodes.at(-1)).toMatchObject({ caller: 'jwt ops@example.com', namespace: testInfra().namespace, payloads: encrypted.length });
    expect(lines.join('\n')).not.toContain(TEAM_SITE_TOKEN);
    expect(stack.logs.join('\n')).not.toContain(CODEC_TOKEN);
    expect(stack.logs.join('\n')).not.toContain(accessToken);
  }, 300_000);

  test('bad input: 400 with a stable code; a body over the cap is 413; an unknown key id is payload_key_unknown', async () => {
    const notBase64 = await codec(stack.apiUrl, 'decode', { payloads: [{ metadata: { encoding: 'binary/encrypted' }, data: '!!' }] }, bearer);
    expect(notBase64.status).toBe(400);
    expect(((await notBase64.json()) as any).error.code).toBe('invalid_body');
    const noPayloads = await codec(stack.apiUrl, 'decode', { items: [] }, bearer);
    expect(noPayloads.status).toBe(400);

    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const foreign = { metadata: { encoding: b64(ENCRYPTED_ENCODING), 'encryption-key-id': b64('AAAAAAAA') }, data: randomBytes(64).toString('base64') };
    const unknown = await codec(stack.apiUrl, 'decode', { payloads: [foreign] }, bearer);
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as any).error.code).toBe('payload_key_unknown');

    const huge = await codec(stack.apiUrl, 'decode', { payloads: [{ data: randomBytes(3_200_000).toString('base64') }] }, bearer);
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as any).error.code).toBe('body_too_large');
  }, 60_000);

  test('CORS: a preflight from a configured UI origin is allowed with credentials; another origin is 403', async () => {
    const preflight = (origin: string) =>
      fetch(`${stack.apiUrl}/codec/decode`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type,x-namespace' },
      });
    const allowed = await preflight(UI_ORIGIN);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    expect(allowed.headers.get('access-control-allow-methods')).toContain('POST');
    expect(allowed.headers.get('access-control-allow-headers')?.toLowerCase().split(/,\s*/).sort()).toEqual(['authorization', 'content-type', 'x-namespace']);

    const other = await preflight('https://evil.example');
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();

    // The call itself carries the origin back for the UI's fetch to read the answer.
    const call = await codec(stack.apiUrl, 'decode', { payloads: [] }, { ...bearer, origin: UI_ORIGIN });
    expect(call.status).toBe(200);
    expect(call.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
  });

  test('refused calls spend the address’s budget of unauthenticated requests: past it 429, a valid token still passes', async () => {
    const limited: RunningApi = await startApi(stack.core, {
      port: 0,
      host: '127.0.0.1',
      alter: (deps) => ({ ...deps, settings: { ...deps.settings, clientRateLimit: { limit: 2, windowMs: 60_000 } } }),
    });
    try {
      const wrong = { authorization: `Bearer ${'w'.repeat(43)}` };
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await codec(limited.url, 'decode', { payloads: [] }, wrong)).status);
      expect(statuses).toEqual([401, 401, 429]);
      expect((await codec(limited.url, 'decode', { payloads: [] }, bearer)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  test('with the endpoint off (the default) its paths are 404', async () => {
    const off: RunningApi = await startApi(stack.core, { port: 0, host: '127.0.0.1', alter: (deps) => ({ ...deps, codecEndpoint: undefined }) });
    try {
      for (const direction of ['decode', 'encode'] as const) {
        const res = await codec(off.url, direction, { payloads: [] }, bearer);
        expect(res.status).toBe(404);
      }
    } finally {
      await off.close();
    }
  });

  test('the temporal CLI shows the history encrypted without the codec, decoded through the endpoint with --codec-endpoint/--codec-auth', async () => {
    const { workflowId } = await runAction('team-site-token', {});
    const show = (...extra: string[]) =>
      run(
        TEMPORAL_CLI,
        ['workflow', 'show', '--address', testInfra().temporalAddress, '--namespace', testInfra().namespace, '-w', workflowId, '-o', 'json', ...extra],
        {
          maxBuffer: 16 * 1024 * 1024,
        },
      );
    const plainShow = await show();
    expect(plainShow.stdout).toContain(Buffer.from(ENCRYPTED_ENCODING).toString('base64'));
    expect(searchable(plainShow.stdout)).not.toContain(TEAM_SITE_TOKEN);

    const decoded = await show('--codec-endpoint', `${stack.apiUrl}/codec`, '--codec-auth', `Bearer ${CODEC_TOKEN}`);
    expect(searchable(decoded.stdout)).toContain(TEAM_SITE_TOKEN);
    // A wrong token: the CLI gets 401 and shows nothing decoded.
    const refused = await show('--codec-endpoint', `${stack.apiUrl}/codec`, '--codec-auth', 'Bearer wrong').then(
      (r) => r.stdout,
      (err: { stdout?: string; stderr?: string }) => `${err.stdout ?? ''}${err.stderr ?? ''}`,
    );
    expect(searchable(refused)).not.toContain(TEAM_SITE_TOKEN);
  }, 120_000);
});
