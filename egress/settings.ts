import type { Config } from '../common/config';
import type { EgressSettings } from './egress';

/**
 * The egress settings of this process: WEFT_EGRESS_ALLOW and the timeouts, plus entries the
 * composition adds for destinations it started itself (the sandbox simulators).
 */
export function egressSettings(
  config: Pick<Config, 'WEFT_EGRESS_ALLOW' | 'WEFT_EGRESS_CONNECT_TIMEOUT_MS' | 'WEFT_EGRESS_HEADERS_TIMEOUT_MS' | 'WEFT_EGRESS_BODY_TIMEOUT_MS'>,
  extraAllow: readonly string[] = [],
): EgressSettings {
  return {
    allow: [...config.WEFT_EGRESS_ALLOW, ...extraAllow],
    connectTimeoutMs: config.WEFT_EGRESS_CONNECT_TIMEOUT_MS,
    headersTimeoutMs: config.WEFT_EGRESS_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: config.WEFT_EGRESS_BODY_TIMEOUT_MS,
  };
}

/** The allow-list entry for a server this process started (a simulator's base URL): exactly its host:port. */
export function allowEntryFor(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || (u.protocol === 'https:' ? 443 : 80)}`;
}
