/**
 * The simulator's HTML: plain, accessible forms (a label for every input, real buttons,
 * errors in a role="alert" region) so a headless browser can drive them by role and label,
 * and a test can post them with fetch. No scripts except the form_post auto-submit.
 *
 * Every form posts back to the simulator with the hidden field `flowToken`; the buttons of
 * the consent and admin-approval pages are `name="action"` submit buttons.
 */
import { errorDescription, type AadError, type TraceIds } from './errors';

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const STYLE = `body{font-family:"Segoe UI",system-ui,sans-serif;background:#f2f2f2;margin:0}
main{max-width:440px;margin:48px auto;background:#fff;padding:44px;box-shadow:0 2px 6px rgba(0,0,0,.2)}
h1{font-size:24px;font-weight:600;margin:0 0 16px}label{display:block;margin:12px 0 4px}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:6px;font-size:15px}
.buttons{margin-top:24px;display:flex;gap:8px;justify-content:flex-end}button{padding:6px 18px;font-size:15px}
[role=alert]{color:#e81123;margin:8px 0}.scope code{color:#555;font-size:12px;margin-left:6px}
.account{color:#555}dl{font-size:12px;color:#555}dt{font-weight:600}`;

function layout(title: string, content: string, attrs = ''): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main${attrs}>
${content}
</main></body></html>`;
}

function hidden(name: string, value: string): string {
  return `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`;
}

export interface SignInPageInput {
  action: string;
  flowToken: string;
  appName: string;
  username?: string;
  error?: string;
}

/** Fields `loginfmt` (label "Username") and `passwd` (label "Password"); button "Sign in". */
export function signInPage(p: SignInPageInput): string {
  const error = p.error ? `<div id="error" role="alert">${escapeHtml(p.error)}</div>\n` : '';
  return layout(
    'Sign in to your account',
    `<h1>Sign in</h1>
<p>to continue to <strong id="app-name">${escapeHtml(p.appName)}</strong></p>
${error}<form method="post" action="${escapeHtml(p.action)}" aria-label="Sign in">
${hidden('flowToken', p.flowToken)}
<label for="loginfmt">Username</label>
<input type="text" id="loginfmt" name="loginfmt" autocomplete="username" value="${escapeHtml(p.username ?? '')}"${p.error ? ' aria-describedby="error"' : ''}>
<label for="passwd">Password</label>
<input type="password" id="passwd" name="passwd" autocomplete="current-password">
<div class="buttons"><button type="submit" id="idSIButton9">Sign in</button></div>
</form>`,
    ' data-page="sign-in"',
  );
}

export interface ScopeLine {
  /** The scope as requested, e.g. `Files.Read.All` (also in `data-scope`). */
  scope: string;
  description: string;
}

function scopeList(scopes: ScopeLine[]): string {
  const items = scopes
    .map((s) => `<li class="scope" data-scope="${escapeHtml(s.scope)}">${escapeHtml(s.description)}<code>${escapeHtml(s.scope)}</code></li>`)
    .join('\n');
  return `<ul id="scopes">\n${items}\n</ul>`;
}

export interface ConsentPageInput {
  action: string;
  flowToken: string;
  appName: string;
  username: string;
  scopes: ScopeLine[];
  /** An admin on a user consent page may also consent for the whole organization. */
  offerOrganizationConsent: boolean;
  /** The admin consent endpoint: accepting grants for every user. */
  forOrganization: boolean;
}

/**
 * Buttons "Accept" (`action=accept`, first, so Enter accepts) and "Cancel" (`action=cancel`);
 * optional checkbox `consent_on_behalf` labelled "Consent on behalf of your organization".
 */
export function consentPage(p: ConsentPageInput): string {
  const onBehalf = p.offerOrganizationConsent
    ? `<p><input type="checkbox" id="consent_on_behalf" name="consent_on_behalf" value="true">
<label for="consent_on_behalf" style="display:inline">Consent on behalf of your organization</label></p>\n`
    : '';
  const intro = p.forOrganization ? `<p>This app would like to (for everyone in your organization):</p>` : `<p>This app would like to:</p>`;
  return layout(
    'Permissions requested',
    `<form method="post" action="${escapeHtml(p.action)}" aria-labelledby="title">
${hidden('flowToken', p.flowToken)}
<p class="account">Signed in as <span id="signed-in-user">${escapeHtml(p.username)}</span></p>
<h1 id="title">Permissions requested${p.forOrganization ? ' — Accept for your organization' : ''}</h1>
<p><strong id="app-name">${escapeHtml(p.appName)}</strong> <span>unverified</span></p>
${intro}
${scopeList(p.scopes)}
${onBehalf}<p>Accepting these permissions means that you allow this app to use your data as specified in their terms of service and privacy statement.</p>
<div class="buttons"><button type="submit" name="action" value="accept">Accept</button>
<button type="submit" name="action" value="cancel">Cancel</button></div>
</form>`,
    ` data-page="${p.forOrganization ? 'admin-consent' : 'consent'}"`,
  );
}

export interface AdminApprovalPageInput {
  action: string;
  flowToken: string;
  appName: string;
  username: string;
  scopes: ScopeLine[];
}

/**
 * AADSTS90094's interstitial. Buttons "Return to the application without granting consent"
 * (`action=return`) and "Have an admin account? Sign in with that account" (`action=switch_account`).
 */
export function adminApprovalPage(p: AdminApprovalPageInput): string {
  return layout(
    'Need admin approval',
    `<form method="post" action="${escapeHtml(p.action)}" aria-labelledby="title">
${hidden('flowToken', p.flowToken)}
<p class="account">Signed in as <span id="signed-in-user">${escapeHtml(p.username)}</span></p>
<h1 id="title">Need admin approval</h1>
<p><strong id="app-name">${escapeHtml(p.appName)}</strong></p>
<p id="message">${escapeHtml(p.appName)} needs permission to access resources in your organization that only an admin can grant. Please ask an admin to grant permission to this app before you can use it.</p>
${scopeList(p.scopes)}
<div class="buttons"><button type="submit" name="action" value="return">Return to the application without granting consent</button>
<button type="submit" name="action" value="switch_account">Have an admin account? Sign in with that account</button></div>
</form>`,
    ' data-page="admin-approval" data-error-code="AADSTS90094"',
  );
}

/** "Sorry, but we're having trouble signing you in." with the AADSTS message in `#error-message`. */
export function errorPage(e: AadError, ids: TraceIds): string {
  const lines = errorDescription(e, ids).split('\r\n');
  return layout(
    'Sign in to your account',
    `<h1>Sorry, but we’re having trouble signing you in.</h1>
<p id="error-message" role="alert">${escapeHtml(lines[0])}</p>
<dl id="troubleshooting">
<dt>Request Id</dt><dd>${escapeHtml(ids.traceId)}</dd>
<dt>Correlation Id</dt><dd>${escapeHtml(ids.correlationId)}</dd>
<dt>Timestamp</dt><dd>${escapeHtml(lines[lines.length - 1].replace(/^Timestamp: /, ''))}</dd>
</dl>`,
    ` data-page="error" data-error-code="AADSTS${e.code}"`,
  );
}

/** A flow that ended or expired (a re-posted form, an hour-old page). */
export function flowGonePage(): string {
  return layout(
    'Sign in to your account',
    `<h1>Sorry, but we’re having trouble signing you in.</h1>
<p id="error-message" role="alert">This sign-in request is no longer valid. Go back to the application and sign in again.</p>`,
    ' data-page="error"',
  );
}

/** `response_mode=form_post`: posts the answer to the redirect URI. */
export function formPostPage(action: string, params: Array<[string, string]>): string {
  return layout(
    'Working...',
    `<form method="post" action="${escapeHtml(action)}" id="form_post">
${params.map(([k, v]) => hidden(k, v)).join('\n')}
<noscript><p>Script is disabled. Click Continue to continue.</p><button type="submit">Continue</button></noscript>
</form>
<script>document.getElementById('form_post').submit();</script>`,
    ' data-page="form-post"',
  );
}

export function signedOutPage(): string {
  return layout('Sign out', '<h1>You signed out of your account</h1>\n<p>It’s a good idea to close all browser windows.</p>', ' data-page="signed-out"');
}
