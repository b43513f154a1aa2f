/**
 * Typed errors with a stable `code`. Anything that crosses a module boundary is one of
 * these, so the API can map it to a status and the workflow layer to a retry decision
 * without parsing messages.
 */
export class WeftError extends Error {
  /**
   * Whether doing the same thing again may succeed. This is the one place it is decided
   * (activities/failures.ts turns it into Temporal's `nonRetryable`): an error of the 4xx
   * kind is about the request itself (bad input, an unknown thing, refused credentials, a
   * provider's final answer after its own retries) and repeats; anything else may pass.
   * A class whose nature differs from its status says so (`RateLimitedError` is retried,
   * `CredentialsUnreadableError` is not).
   */
  readonly retryable: boolean;

  constructor(
    readonly code: string,
    message: string,
    readonly status = 500,
    readonly details?: unknown,
    options: { retryable?: boolean } = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.retryable = options.retryable ?? !(status >= 400 && status < 500);
  }
}

/**
 * A setting the process cannot start with. Printed as its message alone, one line that names
 * the variable and what to do, without a stack: the fix is in the environment, not the code.
 */
export class ConfigError extends WeftError {
  constructor(message: string, details?: unknown) {
    super('config_invalid', message, 500, details);
  }
}

export class BadRequestError extends WeftError {
  constructor(code: string, message: string, details?: unknown) {
    super(code, message, 400, details);
  }
}

export class UnauthorizedError extends WeftError {
  constructor(message = 'Missing or unknown secret key. Send "Authorization: Bearer <secret key>".') {
    super('unauthorized', message, 401);
  }
}

export class NotFoundError extends WeftError {
  constructor(code: string, message: string) {
    super(code, message, 404);
  }
}

export class ConflictError extends WeftError {
  constructor(code: string, message: string) {
    super(code, message, 409);
  }
}

/**
 * Domain errors, thrown below the API (store/, auth/) in the domain's words: what went
 * wrong, not how HTTP says it. Each kind has one status the API answers with, decided here.
 */

/** The name, key or id is already taken (a connection id, an integration's unique key, a secret key). */
export class AlreadyExistsError extends WeftError {
  constructor(code: string, message: string) {
    super(code, message, 409, undefined, { retryable: false });
  }
}

/** A value the caller supplied cannot be used (a cursor Weft did not issue, a metadata key MongoDB cannot store). */
export class InvalidValueError extends WeftError {
  constructor(code: string, message: string, details?: unknown) {
    super(code, message, 400, details, { retryable: false });
  }
}

/**
 * Stored secrets do not open with the configured WEFT_ENCRYPTION_KEY (another key, or not
 * sealed for this place). Retrying cannot fix it: only the operator can, so it is final.
 */
export class CredentialsUnreadableError extends WeftError {
  constructor(message: string) {
    super('credentials_unreadable', message, 500, undefined, { retryable: false });
  }
}

/** One zod issue, in the shape the API returns in `error.errors`. */
export interface ValidationIssue {
  path: string;
  message: string;
  code: string;
}
