import type { ConnectionInfo } from '../runtime/types';
import { createWeftClient, type WeftApiClient } from './api-client/client';
import { DryRunUsageError } from './dryrun-args';

/** Which Weft a dry run talks to, and as which environment. */
export interface WeftTarget {
  host: string;
  environment: 'dev' | 'prod';
  secretKey: string;
  /** The variable the key came from, named in errors. */
  keyVariable: string;
}

export function weftTarget(env: NodeJS.ProcessEnv, environment: string): WeftTarget {
  if (environment !== 'dev' && environment !== 'prod') throw new DryRunUsageError(`-e must be dev or prod, not "${environment}".`);
  const keyVariable = environment === 'dev' ? 'WEFT_SECRET_KEY_DEV' : 'WEFT_SECRET_KEY_PROD';
  const secretKey = env[keyVariable];
  if (!secretKey)
    throw new DryRunUsageError(`${keyVariable} is not set: export it with the ${environment} environment's secret key (printed by Weft's first start).`);
  const host = (env.WEFT_HOST || 'http://localhost:3003').replace(/\/+$/, '');
  return { host, environment, secretKey, keyVariable };
}

/** The connection as the API answers it, with the secret values a saved file must never hold. */
export interface ResolvedConnection {
  info: ConnectionInfo;
  /** Credential values (token, API key, extra tokens): scrubbed from anything printed or saved. */
  secrets: string[];
}

/**
 * Reads the connection from the running Weft (`GET /connections/:id`). The integration is
 * `--integration-id`, or inferred: the one integration that has a connection of that id.
 */
export async function resolveConnection(target: WeftTarget, connectionId: string, integrationId: string | undefined): Promise<ResolvedConnection> {
  const client = createWeftClient({ baseUrl: target.host, secretKey: target.secretKey });
  const providerConfigKey = integrationId ?? (await inferIntegration(client, target, connectionId));
  const { data, response } = await call(target, () =>
    client.GET('/connections/{connectionId}', { params: { path: { connectionId }, query: { provider_config_key: providerConfigKey } } }),
  );
  if (response.status === 404)
    throw new DryRunUsageError(`Unknown connection "${connectionId}" of integration "${providerConfigKey}" in ${target.environment}.`);
  if (!data) throw refusal(target, response.status, 'reading the connection');
  const credentials = data.credentials as Record<string, unknown>;
  const secrets = [credentials.access_token, credentials.refresh_token, credentials.apiKey, ...secretConfigValues(data.connection_config)].filter(
    (s): s is string => typeof s === 'string' && s.length > 0,
  );
  return {
    info: {
      connection_id: data.connection_id,
      provider_config_key: data.provider_config_key,
      provider: data.provider,
      auth_mode: credentials.type as ConnectionInfo['auth_mode'],
      connection_config: data.connection_config,
      metadata: data.metadata,
    },
    secrets,
  };
}

async function inferIntegration(client: WeftApiClient, target: WeftTarget, connectionId: string): Promise<string> {
  const { data, response } = await call(target, () => client.GET('/connections', { params: { query: { connectionId } } }));
  if (!data) throw refusal(target, response.status, 'listing connections');
  const keys = [...new Set(data.connections.filter((c) => c.connection_id === connectionId).map((c) => c.provider_config_key))].sort();
  if (keys.length === 0)
    throw new DryRunUsageError(`Unknown connection "${connectionId}" in ${target.environment}: no integration has a connection of that id.`);
  if (keys.length > 1) {
    throw new DryRunUsageError(`Connection "${connectionId}" exists in several integrations (${keys.join(', ')}): pick one with --integration-id.`);
  }
  return keys[0];
}

/** Values of `connection_config` that are tokens (Microsoft's `teamsiteAccessToken`). */
function secretConfigValues(config: Record<string, unknown>): unknown[] {
  return Object.entries(config)
    .filter(([key]) => /token|secret|password|key$/i.test(key) && !/expires/i.test(key))
    .map(([, value]) => value);
}

async function call<T>(target: WeftTarget, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new DryRunUsageError(
      `Weft is not reachable at ${target.host} (${cause?.code ?? cause?.message ?? (err as Error).message}): start it (npm start) or set WEFT_HOST to its address.`,
    );
  }
}

function refusal(target: WeftTarget, status: number, doing: string): DryRunUsageError {
  if (status === 401)
    return new DryRunUsageError(`Weft refused the secret key in ${target.keyVariable} (401 unauthorized): it is not a key of ${target.host}.`);
  return new DryRunUsageError(`Weft answered HTTP ${status} while ${doing} at ${target.host}.`);
}
