import { WeftError } from '../../common/errors';
import type { ConnectSessionDoc } from '../../store/connect-sessions';
import type { IntegrationDoc } from '../../store/integrations';
import type { ApiDeps } from '../deps';

/** The connect session of a browser-facing request; a clear 401 when unknown or expired. */
export async function openConnectSession(deps: ApiDeps, token: string | undefined, now = new Date()): Promise<ConnectSessionDoc> {
  const session = token ? await deps.stores.connectSessions.find(token) : null;
  if (!session) throw new WeftError('invalid_connect_session', 'This connect link is not valid. Ask the application for a new one.', 401);
  if (session.expires_at.getTime() <= now.getTime()) {
    throw new WeftError('connect_session_expired', 'This connect link has expired (links are valid for 30 minutes). Ask the application for a new one.', 401);
  }
  return session;
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
