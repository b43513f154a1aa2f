import type { Egress } from '../../egress/egress';
import type { AccountThrottle } from './account-throttle';
import type { RequestBudgetGate } from './request-budget';

/** One attempt of one provider request, as the request log (`request_logs`) records it. */
export interface RequestLogEntry {
  method: string;
  url: string;
  status: number | null;
  durationMs: number;
  attempt: number;
  rateLimitWaitMs: number;
  error: string | null;
  /** The provider's id of the request (its definition's `requestIdHeader`), when it sent one. */
  providerRequestId: string | null;
}

/** What a provider call needs of the providers' egress (`stream` only to forward). */
export type ProviderEgress = Pick<Egress<'providers'>, 'purpose' | 'request' | 'checkCredentialTransport'> & Partial<Pick<Egress<'providers'>, 'stream'>>;

/**
 * The connection's credentials added to `headers` for a call to `url`, once the egress has
 * agreed that `url` may carry them (https, or plain http to a host:port the providers'
 * allow-list names: credentials_over_http_refused otherwise, before anything is sent).
 * Every credentialed call (a sync's or action's request, a proxied one) goes through here.
 */
export async function authorizeCall(deps: Pick<ProviderCallDeps, 'authorize' | 'egress'>, url: string, headers: Record<string, string>): Promise<string[]> {
  deps.egress.checkCredentialTransport(url);
  return deps.authorize(headers);
}

/** What every call to a provider needs, whether made for a sync or action (provider-client.ts) or forwarded as it is (provider-forward.ts). */
export interface ProviderCallDeps {
  /** Adds the connection's credentials to outgoing headers; returns the secret values to scrub. */
  authorize(headers: Record<string, string>): Promise<string[]>;
  /**
   * Called once when the provider answers 401: obtain fresh credentials (re-mint an app
   * installation token, refresh an OAuth token). True when the request is worth retrying.
   */
  reauthorize?(): Promise<boolean>;
  budget: RequestBudgetGate | null;
  /** What this process knows of the account's limits (pauses, remaining budget). */
  throttle: AccountThrottle;
  logRequest(entry: RequestLogEntry): void;
  /** Waits up to this long inside the call; longer waits throw RateLimitedError. */
  maxInlineWaitMs: number;
  sleep(ms: number): Promise<void>;
  /**
   * The providers' way out: their allow-list, timeouts, no redirects followed (`stream` for
   * forwarded calls), and the rule on which URLs may carry credentials.
   */
  egress: ProviderEgress;
  signal?: AbortSignal;
}
