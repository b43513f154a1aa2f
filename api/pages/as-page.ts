import type { Response } from 'express';
import { WeftError } from '../../common/errors';
import { resultPage } from './html';

/** Browser routes answer with a page, also when they fail. */
export async function asPage(res: Response, handle: () => Promise<void>): Promise<void> {
  try {
    await handle();
  } catch (err) {
    if (!(err instanceof WeftError)) throw err;
    const title = err.status === 401 ? 'This link cannot be used' : 'The account was not connected';
    res.status(err.status).type('html').send(resultPage({ success: false, title, message: err.message, code: err.code }));
  }
}

