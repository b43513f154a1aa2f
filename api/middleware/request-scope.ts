import type { Request, RequestHandler, Response } from 'express';
import { runInWeftScope, setRequestScope, weftScopesEnabled, type WeftScope } from '../../common/telemetry-scope';

/**
 * With telemetry on, the rest of the request runs in its scope, so its span and the provider
 * calls it makes (proxy calls, credential checks) carry the environment, integration and
 * connection as a sync's do. Read when something is recorded, not now: the environment is known once the
 * secret key has been checked, the body once parsed. The integration and the connection as
 * Nango's API names them: the `Provider-Config-Key` / `Connection-Id` headers (proxy, records)
 * or `provider_config_key` / `connection_id` in the query or the JSON body.
 */
export function requestScope(): RequestHandler {
  return (req, res, next) => {
    if (!weftScopesEnabled()) return next();
    const scope = lazyScope(req, res);
    setRequestScope(req, scope);
    runInWeftScope(scope, next);
  };
}

function lazyScope(req: Request, res: Response): WeftScope {
  const named = (header: string, field: string): string | undefined => {
    const fromHeader = req.get(header);
    if (fromHeader) return fromHeader;
    for (const source of [req.query, req.body] as unknown[]) {
      const value = typeof source === 'object' && source !== null ? (source as Record<string, unknown>)[field] : undefined;
      if (typeof value === 'string') return value;
    }
    return undefined;
  };
  return {
    get environment() {
      return typeof res.locals.environment === 'string' ? res.locals.environment : undefined;
    },
    get integration() {
      return named('provider-config-key', 'provider_config_key');
    },
    get connectionId() {
      return named('connection-id', 'connection_id');
    },
  };
}
