import { ApplicationFailure } from '@temporalio/activity';
import { WeftError } from '../common/errors';
import { RateLimitedError } from '../runtime/errors';

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

/**
 * Turns a thrown Weft error into the Temporal failure the workflow sees: its stable code as
 * the failure type, and `nonRetryable` from the error's own `retryable` (common/errors.ts
 * decides it, once). Temporal honours `nonRetryable` whatever the workflow's retry policy
 * says, so workflows keep no lists of error codes. A rate-limit wait becomes the next
 * attempt's delay: a durable server-side timer instead of a sleep in the worker.
 */
export function toActivityFailure(err: unknown): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (!(err instanceof WeftError)) return err;
  const info: FailureInfo = { status: err.status, ...(err.details === undefined ? {} : { detail: err.details }) };
  return ApplicationFailure.create({
    type: err.code,
    message: err.message,
    details: [info],
    nonRetryable: !err.retryable,
    ...(err instanceof RateLimitedError ? { nextRetryDelay: err.waitMs } : {}),
  });
}

/**
 * The activities, each reporting what it throws through `toActivityFailure`: every failure
 * of a Weft activity carries its stable code and the error's own retry decision.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any activity signature
export function withActivityFailures<T extends Record<string, (...args: any[]) => Promise<unknown>>>(activities: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, activity] of Object.entries(activities)) {
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await activity(...args);
      } catch (err) {
        throw toActivityFailure(err);
      }
    };
  }
  return wrapped as T;
}
