/**
 * What an outbound call is for. Each purpose has its own allow-list, so that an internal
 * address opened for one (a webhook receiver on the company network) does not open it for
 * the other (an integration's provider `base_url` pointed at an internal service and read
 * back through `/proxy`, or an `auth_base_url` handed the OAuth client secret).
 *
 * - `providers`: provider API calls (syncs, actions, the proxy), token and authorization
 *   endpoints, credential checks, resource lookups of connect flows.
 * - `webhooks`: the app's webhook receivers (environment and connection URLs) and chat alerts.
 * - `assets`: images Weft fetches once to serve from its own origin (the Connect page's logo,
 *   `PATCH /environment` `branding.logo_url`); what is fetched is shown to end users, so it
 *   gets no internal address another purpose was opened for.
 */
export type EgressPurpose = 'providers' | 'webhooks' | 'assets';

export const EGRESS_PURPOSES: readonly EgressPurpose[] = ['providers', 'webhooks', 'assets'];

/** The variable that allows destinations for each purpose (common/config.ts). */
export const ALLOW_VARIABLE = {
  providers: 'WEFT_EGRESS_ALLOW_PROVIDERS',
  webhooks: 'WEFT_EGRESS_ALLOW_WEBHOOKS',
  assets: 'WEFT_EGRESS_ALLOW_ASSETS',
} as const satisfies Record<EgressPurpose, string>;

/** The single list of earlier versions: still honoured for the two purposes it covered, with a warning at start. */
export const LEGACY_ALLOW_VARIABLE = 'WEFT_EGRESS_ALLOW';
