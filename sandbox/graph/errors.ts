/**
 * Graph error bodies:
 *   { "error": { "code", "message", "innerError": { "date", "request-id", "client-request-id" } } }
 * The wire spelling is `innerError`; `date` has second precision and no zone suffix.
 */

/** Thrown by route handlers; the pipeline turns it into a Graph error response. */
export class GraphError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra response headers (Retry-After, Location, WWW-Authenticate, Allow). */
    readonly headers: Record<string, string> = {},
    /** Extra innerError fields placed before date/request-id (e.g. a nested `code`). */
    readonly inner: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface RequestIds {
  requestId: string;
  clientRequestId: string;
  /** Request time, epoch ms. */
  now: number;
}

/** `2023-04-05T08:44:07`: the innerError date format. */
function innerDate(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19);
}

export function errorBody(code: string, message: string, ids: RequestIds, inner: Record<string, string> = {}): unknown {
  return {
    error: {
      code,
      message,
      innerError: {
        ...inner,
        date: innerDate(ids.now),
        'request-id': ids.requestId,
        'client-request-id': ids.clientRequestId,
      },
    },
  };
}

/** Graph's throttling body (the documented sample, plus client-request-id). */
export function throttleBody(status: 429 | 503, ids: RequestIds): unknown {
  if (status === 503) {
    return errorBody('serviceNotAvailable', 'The service is temporarily unavailable. Please retry after the time in the Retry-After header.', ids);
  }
  return {
    error: {
      code: 'TooManyRequests',
      message: 'Please retry again later.',
      innerError: {
        code: '429',
        date: innerDate(ids.now),
        message: 'Please retry after',
        'request-id': ids.requestId,
        status: '429',
        'client-request-id': ids.clientRequestId,
      },
    },
  };
}

/** Seconds as Graph sends them in Retry-After: decimal, at most millisecond precision. */
export function formatRetryAfter(seconds: number): string {
  const ms = Math.max(1, Math.ceil(seconds * 1000 - 1e-6));
  return String(ms / 1000);
}

/** Error code and message for an injected failure (`failNext`) with this status. */
export function injectedFailure(status: number): { code: string; message: string } {
  switch (status) {
    case 400:
      return { code: 'invalidRequest', message: 'The request is malformed or incorrect.' };
    case 401:
      return { code: 'InvalidAuthenticationToken', message: 'Access token has expired or is not yet valid.' };
    case 403:
      return { code: 'accessDenied', message: 'The caller does not have permission to perform the action.' };
    case 404:
      return { code: 'itemNotFound', message: 'The resource could not be found.' };
    case 409:
      return { code: 'resourceModified', message: 'The resource being updated has changed since the caller last read it.' };
    case 423:
      return { code: 'resourceLocked', message: 'The resource that is being accessed is locked.' };
    case 429:
      return { code: 'TooManyRequests', message: 'Please retry again later.' };
    case 501:
      return { code: 'notSupported', message: 'The requested feature isn’t implemented.' };
    case 502:
      return { code: 'BadGateway', message: 'The server received an invalid response from an upstream server.' };
    case 503:
      return {
        code: 'serviceNotAvailable',
        message: 'The service is temporarily unavailable for maintenance or is overloaded. You may repeat the request after a delay.',
      };
    case 504:
      return { code: 'GatewayTimeout', message: 'The server did not receive a timely response from an upstream server.' };
    case 507:
      return { code: 'quotaLimitReached', message: 'The maximum storage quota has been reached.' };
    case 509:
      return { code: 'activityLimitReached', message: 'The app or user has been throttled.' };
    default:
      return { code: 'generalException', message: 'An unspecified error has occurred.' };
  }
}

export const RESYNC_MESSAGE =
  "Resync required. Replace any local items with the server's version (including deletes) if you're sure that the service was up to date with your local changes when you last sync'd. Upload any local changes that the server doesn't know about.";
