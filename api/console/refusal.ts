import type { Response } from 'express';
import type { ConsoleSessionDoc } from '../../store/console-sessions';
import { html } from './view/html';
import { consolePage } from './view/layout';

/** A refused console request: a page naming what went wrong, its status and its stable code (`data-error-code`). */
export function consoleRefusal(res: Response, status: number, code: string, message: string, session?: ConsoleSessionDoc): void {
  res
    .status(status)
    .type('html')
    .send(
      consolePage({
        title: 'Refused',
        page: 'console-error',
        session,
        body: html`<div class="error" role="alert" data-error-code=${code}>
          <p>${message}</p>
          <p class="muted">Error code: <code>${code}</code></p>
        </div>
        <p><a href=${session ? '/console/integrations' : '/console/sign-in'}>${session ? 'Back to the console' : 'Sign in'}</a></p>`,
      }),
    );
}
