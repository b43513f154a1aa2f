import type { Response } from 'express';
import { WeftError } from '../../common/errors';
import { outageOf } from '../../common/outage';
import { requestErrorOf } from '../middleware/errors';
import { resultPage } from './html';

/**
 * Browser routes answer with a page, also when they fail: a Weft error, or a request the
 * framework could not read (its own 4xx). Anything else is Weft's fault and goes on to the
 * error middleware (logged, 500). `retry`: where the person can try again from (the Connect
 * page), offered on a failure another try may mend (a mistyped key), not on a spent link.
 */
export async function asPage(res: Response, handle: () => Promise<void>, opts: { retry?: { href: string; label: string } } = {}): Promise<void> {
  try {
    await handle();
  } catch (err) {
    // MongoDB or Temporal out of reach: a page that says so (503, Retry-After), not a 500.
    const outage = outageOf(err);
    if (outage) res.set('Retry-After', String(outage.retryAfterSeconds));
    const refused = outage ?? (err instanceof WeftError ? { status: err.status, code: err.code, message: err.message } : requestErrorOf(err));
    if (!refused) throw err;
    const title = refused.status === 401 ? 'This link cannot be used' : 'The account was not connected';
    // Another try helps unless the link itself is spent (expired, unknown, out of attempts).
    const retry = refused.status === 401 || refused.status === 429 ? undefined : opts.retry;
    res
      .status(refused.status)
      .type('html')
      .send(resultPage({ success: false, title, message: refused.message, code: refused.code, retry }));
  }
}
