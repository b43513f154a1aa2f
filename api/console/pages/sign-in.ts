import type { Request, Response } from 'express';
import type { ApiDeps } from '../../deps';
import { issueSignInToken } from '../auth';
import { html } from '../view/html';
import { consolePage, noticeOf } from '../view/layout';

/** GET /console/sign-in: the environment's secret key, or (when set) the read-only operators' password. */
export function signInPage(deps: ApiDeps, req: Request, res: Response): void {
  if (res.locals.consoleSession) return res.redirect(303, '/console/integrations');
  const token = issueSignInToken(req, res);
  const passwordOn = Boolean(deps.settings.console?.password);
  res.type('html').send(
    consolePage({
      title: 'Sign in',
      page: 'console-sign-in',
      notice: noticeOf(req.query.notice),
      body: html`<div class="signin">
        <h1>Weft console</h1>
        <section class="panel">
          <h2>With a secret key</h2>
          <p class="muted">The key of the environment to operate (it is sent once and never shown again).</p>
          <form class="stack" method="post" action="/console/sign-in" data-form="key">
            <input type="hidden" name="_csrf" value=${token} />
            <input type="hidden" name="method" value="key" />
            <label>Secret key <input name="secret_key" type="password" autocomplete="off" required /></label>
            <button type="submit">Sign in</button>
          </form>
        </section>
        ${
          passwordOn &&
          html`<section class="panel">
          <h2>As a read-only operator</h2>
          <form class="stack" method="post" action="/console/sign-in" data-form="password">
            <input type="hidden" name="_csrf" value=${token} />
            <input type="hidden" name="method" value="password" />
            <label>Environment <input name="environment" value="prod" required /></label>
            <label>Password <input name="password" type="password" autocomplete="current-password" required /></label>
            <button type="submit">Sign in read-only</button>
          </form>
        </section>`
        }
      </div>`,
    }),
  );
}
