import { randomUUID } from 'node:crypto';
import type { IntegrationRegistry } from '../../runtime/registry';
import type { Stores } from '../../store/db';
import { sealedAt, type CredentialCipher } from '../../auth/credential-cipher';
import type { IntegrationCredentials } from '../../auth/credential-source';
import { createGitHubSimulator } from '../../sandbox/github';
import { createGraphSimulator, GRAPH_DEFAULT_ACCESS_TOKEN } from '../../sandbox/graph';
import { createLumaSimulator, LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import {
  createMicrosoftIdentitySimulator,
  MS_IDENTITY_DEFAULT_CLIENT_ID,
  MS_IDENTITY_DEFAULT_CLIENT_SECRET,
  MS_IDENTITY_DEFAULT_USER_PASSWORD,
} from '../../sandbox/microsoft-identity';
import type { ProviderOverrides } from '../../common/stored-documents';
import { allowEntryFor } from '../../egress/settings';
import { StartError } from './errors';

/** A running simulator, however it is implemented. */
interface SimulatorHandle {
  start(port: number): Promise<string>;
  stop(): Promise<void>;
  /** Client credentials the sandbox integration needs (the GitHub App's private key). */
  integrationCredentials?(): IntegrationCredentials;
  /** More provider overrides for its integrations (where the sign-in pages are). */
  providerOverrides?(): ProviderOverrides;
  /** Once the API listens: point the simulated provider's redirects at it. */
  apiReady?(apiUrl: string): void;
}

/**
 * One sandbox simulator and the `dev` integrations that point at it. A simulator starts only
 * when the registry has at least one of its providers, so adding an integration (and its row
 * here) is all it takes for `npm start -- --sandbox` to pick it up.
 */
export interface SandboxSimulatorSpec {
  /** Name on screen; also the key of its port option (`--luma-port` → ports.luma). */
  id: string;
  defaultPort: number;
  /** What a user needs to connect to it (shown on screen). */
  hint: string;
  integrations: Array<{ provider: string; uniqueKey: string; displayName: string }>;
  create(): SimulatorHandle;
}

export const SANDBOX_SIMULATORS: SandboxSimulatorSpec[] = [
  {
    id: 'luma',
    defaultPort: 3010,
    hint: `API key: ${LUMA_DEFAULT_API_KEY}`,
    integrations: [{ provider: 'luma', uniqueKey: 'luma', displayName: 'Luma (sandbox)' }],
    create: () => createLumaSimulator({ seed: 1, eventCount: 250 }),
  },
  {
    id: 'graph',
    defaultPort: 3011,
    hint: `Connect page sign-in: user@contoso.onmicrosoft.com / ${MS_IDENTITY_DEFAULT_USER_PASSWORD}; or POST /connections with access token ${GRAPH_DEFAULT_ACCESS_TOKEN}`,
    integrations: [{ provider: 'one-drive', uniqueKey: 'one-drive', displayName: 'OneDrive (sandbox)' }],
    create: () => graphWithSignIn(),
  },
  {
    id: 'github',
    defaultPort: 3012,
    hint: 'Connect page sign-in: sandbox-user / sandbox-password (installs the App); or App installation id 1001',
    integrations: [{ provider: 'github', uniqueKey: 'github', displayName: 'GitHub (sandbox)' }],
    create: () => {
      const sim = createGitHubSimulator({ seed: 1, oversizedPulls: 1 });
      return Object.assign(sim, {
        // The App's OAuth client too: the install flow proves who installed it with a user token.
        integrationCredentials: (): IntegrationCredentials => ({
          type: 'APP',
          app_id: String(sim.app.id),
          app_link: sim.app.publicLink,
          private_key: sim.appPrivateKeyPem,
          client_id: sim.app.clientId,
          client_secret: sim.app.clientSecret,
        }),
        // github.com's token endpoint (the user-authorization code) is the simulator too.
        providerOverrides: (): ProviderOverrides => ({ auth_base_url: sim.url as string }),
        // The App requests user authorization during installation; its callback URL is Weft's
        // installation callback, where the code proves the installation is the user's.
        apiReady: (apiUrl: string) => sim.configureAppUserAuthorization({ callbackUrls: [`${apiUrl}/app-auth/connect`], requestOAuthOnInstall: true }),
      });
    },
  },
];

export interface SandboxIntegrationResult {
  uniqueKey: string;
  provider: string;
  baseUrl: string;
  outcome: 'created' | 'updated' | 'unchanged' | 'skipped';
  /** Why it was skipped. */
  reason?: string;
}

/** The simulators, listening; their integrations are not registered yet. */
export interface SandboxSimulators {
  simulators: Array<{ id: string; url: string; hint: string; note?: string }>;
  /**
   * Providers' allow-list entries for exactly the simulators' host:port (API and sign-in
   * origins), so the providers' egress lets Weft call them (plain http with credentials
   * included) and nothing else on loopback; webhooks do not get them.
   */
  egressAllow: string[];
  /** Creates (or moves) the `dev` integrations that point at the simulators. */
  registerIntegrations(stores: Stores, cipher: CredentialCipher): Promise<SandboxIntegrationResult[]>;
  /** Tells the simulators where the API listens (OAuth redirect URIs, the App's Setup URL). */
  apiReady(apiUrl: string): void;
  stop(): Promise<void>;
}

export interface RunningSandbox extends Omit<SandboxSimulators, 'registerIntegrations'> {
  integrations: SandboxIntegrationResult[];
}

/**
 * Microsoft Graph plus the Microsoft sign-in pages in front of it: Graph accepts exactly
 * the tokens the identity simulator issues (and the fixed sandbox token for POST /connections).
 */
function graphWithSignIn(): SimulatorHandle {
  const graph = createGraphSimulator({ seed: 1, drives: [{ fileCount: 500 }, { fileCount: 120, driveType: 'documentLibrary', name: 'Team Documents' }] });
  const identity = createMicrosoftIdentitySimulator({});
  identity.onAccessToken((e) => void (e.resource === 'graph' && graph.addAccessToken(e.token)));
  identity.onAccessTokenRevoked((e) => graph.revokeAccessToken(e.token));
  return {
    async start(port) {
      const url = await graph.start(port);
      await identity.start(0);
      const root = (await (await fetch(`${url}/v1.0/sites/root`, { headers: { authorization: `Bearer ${GRAPH_DEFAULT_ACCESS_TOKEN}` } })).json()) as {
        siteCollection: { hostname: string };
      };
      identity.setSharePointHost(root.siteCollection.hostname);
      return url;
    },
    async stop() {
      await identity.stop();
      await graph.stop();
    },
    integrationCredentials: () => ({ type: 'OAUTH2', client_id: MS_IDENTITY_DEFAULT_CLIENT_ID, client_secret: MS_IDENTITY_DEFAULT_CLIENT_SECRET }),
    providerOverrides: () => ({ auth_base_url: identity.url as string }),
    apiReady(apiUrl) {
      // Registered redirect URIs match exactly; a browser may come in by either loopback name.
      for (const host of [apiUrl, apiUrl.replace('127.0.0.1', 'localhost')]) identity.addRedirectUri(MS_IDENTITY_DEFAULT_CLIENT_ID, `${host}/oauth/callback`);
    },
  };
}

export interface SandboxSimulatorOptions {
  /** Only simulators of providers this registry has are started. */
  registry: IntegrationRegistry;
  /** Explicit ports by simulator id; an explicit port that is busy is an error, a busy default is not. */
  ports: Record<string, number | undefined>;
  environment?: string;
  specs?: SandboxSimulatorSpec[];
}

/**
 * Starts the simulators before the core exists: the core's egress client is built with
 * their addresses allowed. Their integrations are registered once the database is open.
 */
export async function startSandboxSimulators(opts: SandboxSimulatorOptions): Promise<SandboxSimulators> {
  const environment = opts.environment ?? 'dev';
  const running: Array<{ handle: SimulatorHandle; available: SandboxSimulatorSpec['integrations']; overrides: ProviderOverrides & { base_url: string } }> = [];
  const result: SandboxSimulators = {
    simulators: [],
    egressAllow: [],
    async registerIntegrations(stores, cipher) {
      const integrations: SandboxIntegrationResult[] = [];
      for (const r of running) {
        const credentials = r.handle.integrationCredentials?.();
        for (const integration of r.available) {
          integrations.push(
            await upsertIntegration(
              stores,
              environment,
              integration,
              r.overrides,
              credentials ? (id) => cipher.seal(credentials, sealedAt.integrationCredentials({ _id: id, environment })) : null,
            ),
          );
        }
      }
      return integrations;
    },
    apiReady(apiUrl) {
      for (const r of running) r.handle.apiReady?.(apiUrl);
    },
    async stop() {
      const errors: unknown[] = [];
      for (const r of [...running].reverse()) await r.handle.stop().catch((err: unknown) => errors.push(err));
      if (errors.length) throw errors[0];
    },
  };
  try {
    for (const spec of opts.specs ?? SANDBOX_SIMULATORS) {
      const available = spec.integrations.filter((i) => opts.registry.get(i.provider));
      if (available.length === 0) continue;
      const handle = spec.create();
      const { url, note } = await listen(spec, handle, opts.ports[spec.id]);
      const overrides = { base_url: url, ...handle.providerOverrides?.() };
      running.push({ handle, available, overrides });
      result.simulators.push({ id: spec.id, url, hint: spec.hint, note });
      for (const origin of Object.values(overrides)) {
        if (typeof origin === 'string' && /^https?:\/\//.test(origin) && !result.egressAllow.includes(allowEntryFor(origin)))
          result.egressAllow.push(allowEntryFor(origin));
      }
    }
  } catch (err) {
    await result.stop().catch(() => {});
    throw err;
  }
  return result;
}

/** Simulators and their integrations in one step, on a database that is already open (tests). */
export async function startSandbox(opts: SandboxSimulatorOptions & { stores: Stores; cipher: CredentialCipher }): Promise<RunningSandbox> {
  const { registerIntegrations, ...sandbox } = await startSandboxSimulators(opts);
  try {
    return { ...sandbox, integrations: await registerIntegrations(opts.stores, opts.cipher) };
  } catch (err) {
    await sandbox.stop().catch(() => {});
    throw err;
  }
}

async function listen(spec: SandboxSimulatorSpec, handle: SimulatorHandle, explicitPort: number | undefined): Promise<{ url: string; note?: string }> {
  try {
    return { url: await handle.start(explicitPort ?? spec.defaultPort) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    if (explicitPort !== undefined) {
      throw new StartError('start_port_busy', `Port ${explicitPort} (--${spec.id}-port) is already in use; pick another or leave the option out.`);
    }
    const url = await handle.start(0);
    return { url, note: `port ${spec.defaultPort} was busy` };
  }
}

/**
 * The simulator's port can change between starts (a busy default, another --luma-port), so
 * an existing integration gets its base_url moved rather than being left pointing at nothing.
 */
async function upsertIntegration(
  stores: Stores,
  environment: string,
  integration: { provider: string; uniqueKey: string; displayName: string },
  overrides: ProviderOverrides & { base_url: string },
  /** Seals the simulator's client credentials for the integration document with this `_id`. */
  sealCredentials: ((integrationDocId: string) => string) | null,
): Promise<SandboxIntegrationResult> {
  const baseUrl = overrides.base_url;
  const base = { uniqueKey: integration.uniqueKey, provider: integration.provider, baseUrl };
  const existing = await stores.integrations.get(environment, integration.uniqueKey);
  if (!existing) {
    const _id = randomUUID();
    await stores.integrations.create({
      _id,
      environment,
      unique_key: integration.uniqueKey,
      provider: integration.provider,
      display_name: integration.displayName,
      credentials_encrypted: sealCredentials?.(_id) ?? null,
      provider_overrides: overrides,
    });
    return { ...base, outcome: 'created' };
  }
  if (existing.provider !== integration.provider) {
    return { ...base, outcome: 'skipped', reason: `"${integration.uniqueKey}" already exists with provider ${existing.provider}` };
  }
  // A simulator's App key is new on every start: the integration must follow it.
  const moved = Object.entries(overrides).some(([k, v]) => existing.provider_overrides?.[k as keyof ProviderOverrides] !== v);
  if (!moved && !sealCredentials) return { ...base, outcome: 'unchanged' };
  await stores.integrations.update(environment, integration.uniqueKey, {
    provider_overrides: { ...existing.provider_overrides, ...overrides },
    ...(sealCredentials ? { credentials_encrypted: sealCredentials(existing._id) } : {}),
  });
  return { ...base, outcome: 'updated' };
}
