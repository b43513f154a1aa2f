import { randomUUID } from 'node:crypto';
import { WeftError } from '../../common/errors';
import { CONNECT_SESSION_MAX_ATTEMPTS, type ConnectSessionDoc } from '../../store/connect-sessions';
import type { IntegrationDoc } from '../../store/integrations';
import type { ApiDeps } from '../deps';

/**
 * The connect session of a browser-facing request; a clear 401 when unknown or expired.
 * The token comes straight from a query string or form, so it may be anything (an array
 * from a repeated field, an object from `a[b]=`): only a string can name a session.
 */
export async function openConnectSession(deps: ApiDeps, token: unknown, now = new Date()): Promise<ConnectSessionDoc> {
  const session = typeof token === 'string' && token ? await deps.stores.connectSessions.find(token) : null;
  if (!session) throw new WeftError('invalid_connect_session', 'This connect link is not valid. Ask the application for a new one.', 401);
  if (session.expires_at.getTime() <= now.getTime()) {
    throw new WeftError('connect_session_expired', 'This connect link has expired (links are valid for 30 minutes). Ask the application for a new one.', 401);
  }
  return session;
}

/** One more flow started with this session; 429 once it has used all its attempts. */
export async function countFlowAttempt(deps: ApiDeps, session: ConnectSessionDoc): Promise<void> {
  if (await deps.stores.connectSessions.countAttempt(session._id, CONNECT_SESSION_MAX_ATTEMPTS)) return;
  throw new WeftError(
    'too_many_attempts',
    `This connect link was already used for ${CONNECT_SESSION_MAX_ATTEMPTS} attempts, the most one link allows. Ask the application for a new one.`,
    429,
  );
}

/** The integrations this session lets the end user connect. */
export async function sessionIntegrations(deps: ApiDeps, session: ConnectSessionDoc): Promise<IntegrationDoc[]> {
  const all = await deps.stores.integrations.list(session.environment);
  return session.allowed_integrations ? all.filter((i) => session.allowed_integrations!.includes(i.unique_key)) : all;
}

export async function sessionIntegration(deps: ApiDeps, session: ConnectSessionDoc, key: string): Promise<IntegrationDoc> {
  const integration = await deps.stores.integrations.get(session.environment, key);
  if (!integration || (session.allowed_integrations && !session.allowed_integrations.includes(key))) {
    throw new WeftError('integration_not_allowed', `Integration "${key}" is not available in this connect session.`, 403);
  }
  return integration;
}

/** Which connection a flow writes to: never the browser's choice. */
export interface FlowTarget {
  connectionId: string;
  /** True for a reconnect session: only this existing connection, re-authorized. */
  reconnect: boolean;
}

/**
 * A new connection gets a generated id (the app learns it from the `auth` webhook and finds
 * it by tags); only a session the app created with `connection_id` re-authorizes, and only
 * that connection, which must still exist (a reconnect link never creates one).
 */
export async function flowTarget(deps: ApiDeps, session: ConnectSessionDoc, integration: IntegrationDoc): Promise<FlowTarget> {
  if (session.connection_id === null) return { connectionId: randomUUID(), reconnect: false };
  await requireReconnectTarget(deps, session.environment, integration, session.connection_id);
  return { connectionId: session.connection_id, reconnect: true };
}

async function requireReconnectTarget(deps: ApiDeps, environment: string, integration: IntegrationDoc, connectionId: string): Promise<void> {
  const existing = await deps.stores.connections.find({ environment, providerConfigKey: integration.unique_key, connectionId });
  if (!existing) throw reconnectTargetMissing(integration, connectionId);
}

export function reconnectTargetMissing(integration: IntegrationDoc, connectionId: string): WeftError {
  return new WeftError(
    'reconnect_connection_not_found',
    `This link re-authorizes connection "${connectionId}" of ${integration.display_name}, which does not exist (it may have been deleted). Nothing was changed; ask the application for a new link.`,
    404,
  );
}
