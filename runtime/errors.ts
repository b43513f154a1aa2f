import { WeftError, type ValidationIssue } from '../common/errors';

/**
 * The provider answered with a non-success status that retries did not fix. Final: the
 * provider client has already retried what may pass (5xx, network errors, throttling).
 */
export class ProviderHttpError extends WeftError {
  constructor(
    readonly providerStatus: number,
    readonly providerBody: unknown,
    readonly providerHeaders: Record<string, string>,
    method: string,
    url: string,
  ) {
    super(
      'provider_http_error',
      `${method} ${url} failed with HTTP ${providerStatus}`,
      424,
      { upstream: { status: providerStatus, headers: providerHeaders, body: providerBody } },
      { retryable: false },
    );
  }
}

/**
 * The provider answered with a redirect. Weft does not follow redirects (egress policy): the
 * address policy vouches only for the host it was asked to call, and credentials must not
 * travel to wherever a response points.
 */
export class ProviderRedirectError extends ProviderHttpError {
  constructor(providerStatus: number, providerHeaders: Record<string, string>, method: string, url: string, location: string) {
    super(providerStatus, null, providerHeaders, method, url);
    this.message = `${method} ${url} answered HTTP ${providerStatus}, a redirect to ${location}, which Weft does not follow.`;
  }
}

/** The provider could not be reached (DNS, refused, reset, timeout) after the client's own retries: final. */
export class ProviderUnreachableError extends WeftError {
  constructor(method: string, url: string, cause: string) {
    super('provider_unreachable', `${method} ${url} failed: ${cause}`, 424, undefined, { retryable: false });
  }
}

/**
 * A wait too long to sleep inside an activity: retried, after `waitMs` (the activity
 * failure's nextRetryDelay, a durable server-side timer).
 */
export class RateLimitedError extends WeftError {
  constructor(
    readonly waitMs: number,
    reason: string,
  ) {
    super('rate_limited', `${reason}; retry in ${Math.ceil(waitMs / 1000)} s`, 429, undefined, { retryable: true });
  }
}

/** The provider refused the credentials: the connection needs the user to re-authorize (final). */
export class ProviderAuthError extends WeftError {
  constructor(status: number, message: string) {
    super('provider_auth_failed', message, 424, { upstream: { status } }, { retryable: false });
  }
}

export interface InvalidRecordDetail {
  validation: ValidationIssue[];
  model: string;
}

export class InvalidRecordError extends WeftError {
  constructor(
    readonly detail: InvalidRecordDetail,
    readonly record?: unknown,
  ) {
    super(
      'invalid_sync_record',
      `Invalid record for model ${detail.model}: ${detail.validation.map((v) => `${v.path}: ${v.message}`).join('; ')}`,
      400,
      detail,
      { retryable: false },
    );
  }
}

/** Integration code used the runtime wrongly (an undeclared model, no pagination type): final until the code changes. */
export class IntegrationCodeError extends WeftError {
  constructor(code: string, message: string) {
    super(code, message, 400, undefined, { retryable: false });
  }
}

/**
 * An action refused its request for a reason the app can act on (the item is a folder,
 * the file is gone, its input or output does not match its schema). Thrown by integration
 * code and the action activity; the API answers with its status and code. Final whatever
 * the status: running the same action on the same input gives the same answer.
 */
export class ActionError extends WeftError {
  constructor(code: string, message: string, status = 400, details?: unknown) {
    super(code, message, status, details, { retryable: false });
  }
}

/** True when `err` is the provider answering `status` (e.g. Graph's 410 for a lost delta token). */
export function isProviderStatus(err: unknown, ...statuses: number[]): err is ProviderHttpError {
  return err instanceof ProviderHttpError && statuses.includes(err.providerStatus);
}
