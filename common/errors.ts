/**
 * Typed errors with a stable `code`. Anything that crosses a module boundary is one of
 * these, so the API can map it to a status and the workflow layer to a retry decision
 * without parsing messages.
 */
export class WeftError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 500,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
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


/** One zod issue, in the shape the API returns in `error.errors`. */
export interface ValidationIssue {
  path: string;
  message: string;
  code: string;
}
