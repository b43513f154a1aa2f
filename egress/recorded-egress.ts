import type { Egress, EgressPurpose } from './egress';
import { redactUrl } from './redact';

/** One call made through an egress, as the request log keeps it: no headers, no bodies, the URL redacted. */
export interface EgressCall {
  method: string;
  url: string;
  /** Null when no answer came (refused, unreachable, timed out). */
  status: number | null;
  durationMs: number;
  error: string | null;
}

/**
 * The same egress, reporting every call to `record` once it has ended, answered or not.
 * For calls made outside a provider client (token endpoints, resource lookups of connect
 * flows), which would otherwise leave no trace in the request log. `record` must not throw.
 */
export function recordedEgress<P extends EgressPurpose>(egress: Egress<P>, record: (call: EgressCall) => void): Egress<P> {
  const observe = async <T>(method: string | undefined, url: string | URL, send: () => Promise<T>, statusOf: (res: T) => number): Promise<T> => {
    const started = performance.now();
    const report = (status: number | null, error: string | null) =>
      record({ method: (method ?? 'GET').toUpperCase(), url: redactUrl(String(url)), status, durationMs: Math.round(performance.now() - started), error });
    try {
      const res = await send();
      const status = statusOf(res);
      report(status, status >= 400 ? `HTTP ${status}` : null);
      return res;
    } catch (err) {
      report(null, err instanceof Error ? err.message : String(err));
      throw err;
    }
  };
  return {
    purpose: egress.purpose,
    request: (url, req) =>
      observe(
        req?.method,
        url,
        () => egress.request(url, req),
        (res) => res.status,
      ),
    stream: (url, req) =>
      observe(
        req?.method,
        url,
        () => egress.stream(url, req),
        (res) => res.status,
      ),
    fetch: (input, init) =>
      observe(
        init?.method,
        input,
        () => egress.fetch(input, init),
        (res) => res.status,
      ),
    checkUrl: (url, what) => egress.checkUrl(url, what),
    checkCredentialTransport: (url, what) => egress.checkCredentialTransport(url, what),
    // The wrapped egress belongs to whoever made it: closing a view of it closes nothing.
    close: () => Promise.resolve(),
  };
}
