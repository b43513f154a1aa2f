import { randomBytes } from 'node:crypto';
import { createGitHubIntegration, createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * What the fuzz runs against: a whole Weft (real Temporal, real FerretDB, the in-process
 * API and worker, the three simulators) with one of everything a route can name (an
 * integration and a connection per auth mode, a connect session), and the secrets that
 * must never come back where they do not belong.
 */
export interface Secret {
  name: string;
  value: string;
  /** Where a response may carry it by design (e.g. `GET /connections/:id` hands out credentials). */
  allowedIn?: (route: string, status: number) => boolean;
}

export interface FuzzFixture {
  stack: WeftStack;
  ids: { luma: string; oneDrive: string; github: string };
  /** The connect session the browser routes use now; replaced as it uses up its attempts. */
  sessionToken: string;
  secrets: Secret[];
  /** A new connect session (the old one has used up its attempts); a state change the runner re-baselines around. */
  rotateSession(): Promise<void>;
  /** Waits until no sync or action workflow of this stack is running (started by an accepted request). */
  quiesce(timeoutMs?: number): Promise<void>;
  shutdown(): Promise<void>;
}

const credentialRoutes = (route: string) => route === 'GET /connections/:connectionId' || route === 'GET /connection/:connectionId';
const integrationRoutes = (route: string) => route === 'GET /integrations/:key';

export async function startFuzzFixture(): Promise<FuzzFixture> {
  const lumaKey = `fz-luma-${randomBytes(12).toString('hex')}`;
  const graphToken = `fz-graph-${randomBytes(12).toString('hex')}`;
  const oauthClientSecret = `fz-client-secret-${randomBytes(12).toString('hex')}`;
  const stack = await startWeftStack({
    // Little data: the fuzz is about the API, and the state check reads every document per batch.
    luma: { apiKeys: [lumaKey], eventCount: 20 },
    graph: { accessTokens: [graphToken], drives: [{ fileCount: 10 }] },
    github: { pullsPerRepo: 2, commitsPerPull: [1, 2] },
    // Bounded, so a request that announces more body than it sends ends in a 408 quickly.
    httpTimeouts: { headersTimeoutMs: 1_000, requestTimeoutMs: 1_000 },
    // A sync-mode action that outlives this answers 504: a failure the fuzz reports, not a hang.
    actionTimeoutMs: 8_000,
    // Temporal calls of a status read get 10 s, as in the e2e tests: on a loaded machine the 1.5 s default answered 503 orchestrator_unavailable.
    temporalCallTimeoutMs: 10_000,
    // Raised, not off: the limiter stays in the path of every request, and 429s do not mask other answers.
    apiRateLimit: { limit: 1_000_000, windowMs: 60_000 },
    // Likewise the per-address limit of requests without a valid key (the fuzz sends many, from one address).
    env: { WEFT_API_CLIENT_RATE_LIMIT: '1000000' },
  });
  const ids = { luma: 'fz-luma', oneDrive: 'fz-drive', github: 'fz-gh' };
  try {
    await createLumaIntegration(stack);
    await createGitHubIntegration(stack);
    const drive = await stack.api('POST', '/integrations', {
      body: {
        unique_key: 'one-drive',
        provider: 'one-drive',
        credentials: { type: 'OAUTH2', client_id: 'fz-client-id', client_secret: oauthClientSecret },
        provider_overrides: { base_url: stack.graph.url },
      },
    });
    if (drive.status !== 201) throw new Error(`one-drive integration: ${JSON.stringify(drive.body)}`);
    const connect = async (body: Record<string, unknown>) => {
      const res = await stack.api('POST', '/connections', { body });
      if (res.status !== 201) throw new Error(`seeding connection: ${res.status} ${JSON.stringify(res.body)}`);
    };
    await connect({
      provider_config_key: 'luma',
      connection_id: ids.luma,
      credentials: { type: 'API_KEY', apiKey: lumaKey },
      metadata: { plan: 'fz' },
      tags: { user: 'fz' },
    });
    await connect({ provider_config_key: 'one-drive', connection_id: ids.oneDrive, credentials: { type: 'OAUTH2', access_token: graphToken } });
    await connect({
      provider_config_key: 'github',
      connection_id: ids.github,
      credentials: { type: 'APP', app_id: String(stack.github.app.id), installation_id: '1001' },
    });

    const fixture: FuzzFixture = {
      stack,
      ids,
      sessionToken: '',
      secrets: [
        { name: 'dev secret key', value: stack.keys.dev },
        { name: 'prod secret key', value: stack.keys.prod },
        { name: 'stored Luma API key', value: lumaKey, allowedIn: (route, status) => status < 300 && credentialRoutes(route) },
        { name: 'stored Graph access token', value: graphToken, allowedIn: (route, status) => status < 300 && credentialRoutes(route) },
        { name: 'OAuth client secret', value: oauthClientSecret, allowedIn: (route, status) => status < 300 && integrationRoutes(route) },
        // The PEM body without its markers: any quoted part of the key would contain this line.
        {
          name: 'GitHub App private key',
          value: stack.github.appPrivateKeyPem.split('\n')[5],
          allowedIn: (route, status) => status < 300 && integrationRoutes(route),
        },
      ],
      async rotateSession() {
        const res = await stack.api('POST', '/connect/sessions', { body: { allowed_integrations: ['luma', 'one-drive', 'github'], tags: { user: 'fz' } } });
        if (res.status !== 201) throw new Error(`connect session: ${res.status} ${JSON.stringify(res.body)}`);
        fixture.sessionToken = res.body.data.token;
        // The Connect page shows the user their own link's token, and so does the API-key form's
        // refusal page in its "Try again" link back to it (not for a refused or spent session:
        // 401, 429); nothing else may.
        fixture.secrets.push({
          name: 'connect session token',
          value: fixture.sessionToken,
          allowedIn: (route, status) =>
            (status < 300 && route === 'GET /connect') ||
            (route === 'POST /connect/api-key/:key' && status >= 400 && status < 500 && status !== 401 && status !== 429),
        });
      },
      async quiesce(timeoutMs = 60_000) {
        const queues = [stack.taskQueue, stack.env.WEFT_ACTION_TASK_QUEUE];
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          let running = 0;
          for (const queue of queues) {
            for await (const _ of stack.temporal.workflow.list({ query: `TaskQueue="${queue}" AND ExecutionStatus="Running"` })) running++;
          }
          if (running === 0) return;
          if (Date.now() > deadline) throw new Error(`${running} workflow(s) still running after ${timeoutMs} ms`);
          await new Promise((r) => setTimeout(r, 250));
        }
      },
      shutdown: () => stack.shutdown(),
    };
    await fixture.rotateSession();
    // The first syncs of the three connections run now, not in the middle of the fuzz.
    await fixture.quiesce(120_000);
    // The installation token Weft minted and stored (the route that hands it out mints it when missing).
    const gh = await stack.api('GET', `/connections/${ids.github}?provider_config_key=github`);
    const ghToken = gh.body?.credentials?.access_token;
    if (typeof ghToken !== 'string') throw new Error(`seeded GitHub connection: ${gh.status} ${JSON.stringify(gh.body)}`);
    fixture.secrets.push({ name: 'stored GitHub installation token', value: ghToken, allowedIn: (route, status) => status < 300 && credentialRoutes(route) });
    return fixture;
  } catch (err) {
    await stack.shutdown();
    throw err;
  }
}
