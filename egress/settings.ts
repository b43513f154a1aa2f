import type { Config } from '../common/config';
import { createEgress, type EgressSettings, type Egresses } from './egress';
import { parseAllowList } from './address-policy';
import { ALLOW_VARIABLE, EGRESS_PURPOSES, LEGACY_ALLOW_VARIABLE, type EgressPurpose } from './purposes';

export type EgressConfig = Pick<
  Config,
  | 'WEFT_EGRESS_ALLOW'
  | 'WEFT_EGRESS_ALLOW_PROVIDERS'
  | 'WEFT_EGRESS_ALLOW_WEBHOOKS'
  | 'WEFT_EGRESS_ALLOW_ASSETS'
  | 'WEFT_EGRESS_CONNECT_TIMEOUT_MS'
  | 'WEFT_EGRESS_HEADERS_TIMEOUT_MS'
  | 'WEFT_EGRESS_BODY_TIMEOUT_MS'
>;

/** Entries a process adds for servers it started itself (the sandbox simulators, a test's receivers), per purpose. */
export type ExtraAllow = Partial<Record<EgressPurpose, readonly string[]>>;

/**
 * One purpose's egress settings: its own variable, the legacy WEFT_EGRESS_ALLOW (which
 * earlier versions applied to every call, so it still does for providers and webhooks; the
 * `assets` purpose came later and never read it), and the entries the composition adds for
 * destinations it started itself.
 */
export function egressSettings<P extends EgressPurpose>(config: EgressConfig, purpose: P, extraAllow: readonly string[] = []): EgressSettings<P> {
  return {
    purpose,
    allow: [
      { variable: ALLOW_VARIABLE[purpose], entries: config[ALLOW_VARIABLE[purpose]] },
      { variable: LEGACY_ALLOW_VARIABLE, entries: purpose === 'assets' ? [] : config.WEFT_EGRESS_ALLOW },
      { variable: `${purpose} servers this process started`, entries: extraAllow },
    ],
    connectTimeoutMs: config.WEFT_EGRESS_CONNECT_TIMEOUT_MS,
    headersTimeoutMs: config.WEFT_EGRESS_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: config.WEFT_EGRESS_BODY_TIMEOUT_MS,
  };
}

/** The process's ways out, one per purpose, built from its config; `close` closes them all. */
export function createEgresses(
  config: EgressConfig,
  opts: { extraAllow?: ExtraAllow; timeouts?: Partial<Pick<EgressSettings<EgressPurpose>, 'connectTimeoutMs' | 'headersTimeoutMs' | 'bodyTimeoutMs'>> } = {},
): Egresses & { close(): Promise<void> } {
  const providers = createEgress({ ...egressSettings(config, 'providers', opts.extraAllow?.providers), ...opts.timeouts });
  const webhooks = createEgress({ ...egressSettings(config, 'webhooks', opts.extraAllow?.webhooks), ...opts.timeouts });
  const assets = createEgress({ ...egressSettings(config, 'assets', opts.extraAllow?.assets), ...opts.timeouts });
  return {
    providers,
    webhooks,
    assets,
    close: async () => {
      await Promise.all([providers.close(), webhooks.close(), assets.close()]);
    },
  };
}

/** Throws InvalidAllowEntryError, naming the variable, on the first mistyped entry of any allow-list. */
export function validateAllowLists(config: EgressConfig): void {
  parseAllowList(config.WEFT_EGRESS_ALLOW, LEGACY_ALLOW_VARIABLE);
  for (const purpose of EGRESS_PURPOSES) parseAllowList(config[ALLOW_VARIABLE[purpose]], ALLOW_VARIABLE[purpose]);
}

/**
 * What a process says at start when the legacy single list is set: it still opens its
 * entries for provider calls (and the proxy) as well as for webhooks, which is rarely what
 * it was set for. Null when it is not set.
 */
export function legacyAllowWarning(config: Pick<Config, 'WEFT_EGRESS_ALLOW'>): string | null {
  if (config.WEFT_EGRESS_ALLOW.length === 0) return null;
  return (
    `${LEGACY_ALLOW_VARIABLE} is deprecated: its entries (${config.WEFT_EGRESS_ALLOW.join(', ')}) are allowed for provider calls ` +
    `(base_url, auth_base_url, /proxy) as well as for webhooks. Move them to ${ALLOW_VARIABLE.webhooks} (webhook receivers, ` +
    `chat alerts) or ${ALLOW_VARIABLE.providers} (provider APIs, token endpoints) and unset ${LEGACY_ALLOW_VARIABLE}.`
  );
}

/** The allow-list entry for a server this process started (a simulator's base URL): exactly its host:port. */
export function allowEntryFor(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || (u.protocol === 'https:' ? 443 : 80)}`;
}
