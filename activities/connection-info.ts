import { sealedAt, type CredentialCipher } from '../auth/credential-cipher';
import { extraTokenConfig, type Credentials } from '../auth/credentials';
import type { ConnectionInfo } from '../runtime/types';
import type { ConnectionDoc } from '../store/connections';

/**
 * What integration code may see of a stored connection: never its main credentials. The
 * provider's extra tokens are the exception (Microsoft's team-site token,
 * `connection_config.teamsiteAccessToken`); Weft stores them sealed and hands them over here.
 */
export function connectionInfo(connection: ConnectionDoc, cipher?: CredentialCipher): ConnectionInfo {
  const info: ConnectionInfo = {
    connection_id: connection.connection_id,
    provider_config_key: connection.provider_config_key,
    provider: connection.provider,
    auth_mode: connection.auth_mode,
    connection_config: connection.connection_config,
    metadata: connection.metadata,
  };
  if (cipher && connection.auth_mode === 'OAUTH2') {
    const credentials = cipher.open<Credentials>(connection.credentials_encrypted, sealedAt.connectionCredentials(connection));
    if (credentials.type === 'OAUTH2') info.connection_config = { ...connection.connection_config, ...extraTokenConfig(credentials) };
  }
  return info;
}
