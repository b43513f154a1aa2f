import type { ProviderSessionDeps } from '../../common/provider-session';
import type { ApiDeps } from '../deps';

/** Calls the API makes itself (verifying credentials) wait at most a few seconds inline. */
const API_MAX_INLINE_WAIT_MS = 5_000;

export function sessionDeps(deps: ApiDeps): ProviderSessionDeps {
  return { stores: deps.stores, cipher: deps.cipher, registry: deps.registry, logger: deps.logger, maxInlineWaitMs: API_MAX_INLINE_WAIT_MS, egress: deps.egress };
}
