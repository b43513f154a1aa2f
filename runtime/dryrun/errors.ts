import { WeftError } from '../../common/errors';

/** The Weft a dry run sends its calls through did not answer at all (not started, wrong WEFT_HOST). */
export class WeftUnreachableError extends WeftError {
  constructor(
    readonly url: string,
    cause: string,
  ) {
    super('weft_unreachable', `Weft is not reachable at ${url} (${cause}); start it (npm start) or set WEFT_HOST to its address.`, 503, undefined, {
      retryable: false,
    });
  }
}

/**
 * Weft itself refused a dry run's call (not the provider behind it): a secret key it does not
 * know, a connection or integration it does not have, a host the proxy does not allow. The
 * code and message are Weft's own.
 */
export class WeftRefusedError extends WeftError {
  constructor(code: string, message: string, status: number) {
    super(code, message, status, undefined, { retryable: false });
  }
}
