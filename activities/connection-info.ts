import type { ConnectionInfo } from '../runtime/types';
import type { ConnectionDoc } from '../store/connections';

/** What integration code may see of a stored connection (never its credentials). */
export function connectionInfo(connection: ConnectionDoc): ConnectionInfo {
  return {
    connection_id: connection.connection_id,
    provider_config_key: connection.provider_config_key,
    provider: connection.provider,
    auth_mode: connection.auth_mode,
    connection_config: connection.connection_config,
    metadata: connection.metadata,
  };
}
