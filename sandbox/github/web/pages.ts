/**
 * The pages of the simulated github.com. Names a browser script relies on (labels, button
 * texts, field names) are GitHub's where GitHub has one (`login`, `password`, "Sign in",
 * `authorize` = 1/0); they are listed in the simulator's header comment.
 */
import { hidden, html, Html, page } from './html';
import { SCOPE_DESCRIPTIONS } from '../oauth';

export function signInPage(o: {
  returnTo: string;
  login?: string | null;
  error?: string | null;
  /** "to continue to {app}" under the heading (OAuth flows). */
  appName?: string | null;
  allowSignup: boolean;
}): string {
  return page({
    title: 'Sign in to GitHub',
    body: html`<h1>Sign in to GitHub</h1>
${o.appName ? html`<p>to continue to <strong>${o.appName}</strong></p>` : null}
${o.error ? html`<div role="alert">${o.error}</div>` : null}
<form method="post" action="/session">
${hidden('return_to', o.returnTo)}
<label for="login_field">Username or email address</label>
<input type="text" name="login" id="login_field" autocomplete="username" autocapitalize="off" autocorrect="off" autofocus required value="${o.login ?? ''}">
<label for="password">Password</label>
<input type="password" name="password" id="password" autocomplete="current-password" required>
<button type="submit" name="commit" value="Sign in" class="primary">Sign in</button>
</form>
${o.allowSignup ? html`<p>New to GitHub? <a href="/signup">Create an account</a></p>` : null}`,
  });
}

export function signedInPage(login: string): string {
  return page({
    title: 'Signed in',
    signedInAs: login,
    body: html`<h1>Signed in</h1>
<p>You are signed in as <strong>${login}</strong>.</p>
<form method="post" action="/logout"><button type="submit">Sign out</button></form>`,
  });
}

export function authorizePage(o: {
  appName: string;
  homepageUrl: string;
  login: string;
  scopes: readonly string[];
  pendingId: string;
  redirectTo: string;
}): string {
  const scopes = o.scopes.length
    ? html`<ul aria-label="Requested scopes">${o.scopes.map((s) => html`<li data-scope="${s}"><strong>${s}</strong>: ${SCOPE_DESCRIPTIONS[s] ?? s}</li>`)}</ul>`
    : html`<p data-scope="">Public information (read-only): no scopes requested.</p>`;
  const origin = new URL(o.redirectTo).origin;
  return page({
    title: `Authorize ${o.appName}`,
    signedInAs: o.login,
    body: html`<h1>Authorize ${o.appName}</h1>
<p><a href="${o.homepageUrl}">${o.appName}</a> wants to access your <strong>${o.login}</strong> account</p>
<h2>Requested permissions</h2>
${scopes}
<form method="post" action="/login/oauth/authorize">
${hidden('authorize_request', o.pendingId)}
<button type="submit" name="authorize" value="1" class="primary">Authorize ${o.appName}</button>
<button type="submit" name="authorize" value="0">Cancel</button>
</form>
<p>Authorizing will redirect to <strong>${origin}</strong></p>`,
  });
}

export function appPage(o: { appName: string; slug: string; installHref: string; login: string | null }): string {
  return page({
    title: o.appName,
    signedInAs: o.login,
    body: html`<h1>${o.appName}</h1>
<p>GitHub App <code>${o.slug}</code> (simulated).</p>
<p><a href="${o.installHref}">Install</a></p>`,
  });
}

export interface InstallRepoOption {
  id: number;
  fullName: string;
  private: boolean;
}

export function installPage(o: {
  appName: string;
  slug: string;
  login: string;
  repos: readonly InstallRepoOption[];
  pendingId: string;
  /** The account's installation when the App is installed there already (the form updates it). */
  existing: { id: number; selectedRepoIds: ReadonlySet<number> | null } | null;
  /** Re-rendered after a mistake: what the user chose, and why it was refused. */
  chosen?: { selection: string; repoIds: ReadonlySet<number> };
  error?: string | null;
}): string {
  const selection = o.chosen?.selection ?? (o.existing?.selectedRepoIds ? 'selected' : 'all');
  const picked = o.chosen?.repoIds ?? o.existing?.selectedRepoIds ?? new Set<number>();
  const checked = (on: boolean) => (on ? new Html(' checked') : null);
  const repos = o.repos.map(
    (r) =>
      html`<div><input type="checkbox" id="repo_${r.id}" name="repository_ids" value="${r.id}"${checked(picked.has(r.id))}><label for="repo_${r.id}">${r.fullName}</label>${r.private ? html` <small>(private)</small>` : null}</div>`,
  );
  return page({
    title: `Install ${o.appName}`,
    signedInAs: o.login,
    body: html`<h1>Install ${o.appName}</h1>
<p>Install on your personal account <strong>${o.login}</strong></p>
${o.existing ? html`<p data-installation-id="${o.existing.id}">${o.appName} is already installed on <strong>${o.login}</strong>; installing again updates its repository access.</p>` : null}
${o.error ? html`<div role="alert">${o.error}</div>` : null}
<form method="post" action="/apps/${o.slug}/installations">
${hidden('install_request', o.pendingId)}
<fieldset>
<legend>Repository access</legend>
<div><input type="radio" id="install_target_all" name="repository_selection" value="all"${checked(selection === 'all')}><label for="install_target_all">All repositories</label>
<small>This applies to all current and future repositories owned by the resource owner.</small></div>
<div><input type="radio" id="install_target_selected" name="repository_selection" value="selected"${checked(selection === 'selected')}><label for="install_target_selected">Only select repositories</label></div>
</fieldset>
<fieldset>
<legend>Select repositories</legend>
${repos.length ? repos : html`<p>This account has no repositories.</p>`}
</fieldset>
<p>with these permissions: read access to code, metadata and pull requests</p>
<button type="submit" name="action" value="install" class="primary">Install</button>
<button type="submit" name="action" value="cancel">Cancel</button>
</form>`,
  });
}

/** A page that only says something (results, errors, 404). */
export function messagePage(o: { title: string; text: Html | string; login?: string | null }): string {
  return page({ title: o.title, signedInAs: o.login, body: html`<h1>${o.title}</h1>\n<p>${o.text}</p>` });
}
