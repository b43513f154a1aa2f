import { ApplicationFailure } from '@temporalio/activity';
import { WeftError } from '../common/errors';
import { ProviderAuthError, RateLimitedError } from '../runtime/errors';

/**
 * The one `details` entry every Weft activity failure carries, so the API can answer an
 * action with the right status and body, and operators see the same in the Temporal UI.
 */
export interface FailureInfo {
  /** The HTTP status the API answers with (424 for a provider failure, 400 for bad input, ...). */
  status: number;
  /** The error's structured detail: `upstream`, the validation failure record, issues. */
  detail?: unknown;
}

/** Maps runtime errors to Temporal failures with a stable type and the right retry choice. */
export function toActivityFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (!(err instanceof WeftError)) return err;
  const info: FailureInfo = { status: err.status, ...(err.details === undefined ? {} : { detail: err.details }) };
  if (err instanceof RateLimitedError) {
    // The wait becomes a durable server-side timer: this attempt ends, the next resumes.
    return ApplicationFailure.create({ type: err.code, message: err.message, details: [info], nextRetryDelay: err.waitMs, nonRetryable: false });
  }
  if (err instanceof ProviderAuthError) {
    return ApplicationFailure.create({ type: err.code, message: err.message, details: [info], nonRetryable: true });
  }
  const upstream = (err.details as { upstream?: { status?: number } } | undefined)?.upstream;
  // 4xx from the provider will not fix itself (except 408/409/429); 5xx and network errors may.
  const clientError = upstream?.status !== undefined && upstream.status >= 400 && upstream.status < 500 && ![408, 409, 429].includes(upstream.status);
  const nonRetryable = clientError || (err.status >= 400 && err.status < 500) || err.code === 'invalid_action_output';
  return ApplicationFailure.create({ type: err.code, message: err.message, details: [info], nonRetryable });
}
