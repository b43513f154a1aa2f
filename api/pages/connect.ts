import { EXPIRY_SCRIPT, escapeHtml, layout, type PageTheme } from './html';

/** One line of what an integration gives the app: plain words, or the scope itself when none are known. */
export interface AccessLine {
  text: string;
  /** The scope it stands for (shown as it is when `known` is false). */
  scope?: string;
  known: boolean;
}

/** What the Connect page shows, gathered by api/routers/connect-page.ts. */
export interface ConnectPageView {
  token: string;
  expiresAt: Date;
  now: Date;
  endUser: { id: string; email?: string; display_name?: string } | null;
  app: {
    name: string | null;
    /** A path on Weft's own origin. */
    logoUrl: string | null;
    /** The colour stylesheet, a path on Weft's own origin. */
    stylesheet: string | null;
    theme: PageTheme;
  };
  integrations: Array<{
    key: string;
    name: string;
    flow: 'api-key' | 'redirect';
    /** A path on Weft's own origin. */
    logoUrl: string | null;
    docsUrl: string | null;
    access: AccessLine[];
  }>;
}

/**
 * The Connect page: whose app, for whom, until when, and per integration its logo, what the
 * app gets in plain words, a help link, and the way to connect (a form for an API key, a link
 * for the provider's own page). Everything the app or the integration wrote is escaped text.
 */
export function connectPage(view: ConnectPageView): string {
  const app = view.app.name;
  const sections = view.integrations.map((integration) => {
    const name = escapeHtml(integration.name);
    const key = encodeURIComponent(integration.key);
    const logo = integration.logoUrl ? `<img src="${escapeHtml(integration.logoUrl)}" alt="" width="40" height="40" data-provider-logo>` : '';
    const head = `<div class="integration-head">${logo}<h2>${name}</h2></div>`;
    const access = integration.access.length
      ? `<p class="muted">${escapeHtml(app ?? 'The app')} will be able to:</p>
<ul class="access" data-access>
${integration.access.map(accessItem).join('\n')}
</ul>`
      : '';
    const docs = integration.docsUrl
      ? `<p class="muted"><a href="${escapeHtml(integration.docsUrl)}" target="_blank" rel="noopener noreferrer" data-docs-link>Help with ${name}</a></p>`
      : '';
    const action =
      integration.flow === 'api-key'
        ? `<form method="post" action="/connect/api-key/${key}">
<input type="hidden" name="connect_session_token" value="${escapeHtml(view.token)}">
<label for="api-key-${key}">API key</label>
<input id="api-key-${key}" name="apiKey" type="password" autocomplete="off" required>
<p><button type="submit">Connect ${name}</button></p>
</form>`
        : `<p><a class="button" href="${escapeHtml(`/oauth/connect/${key}?connect_session_token=${encodeURIComponent(view.token)}`)}">Connect ${name}</a></p>`;
    return `<section data-integration="${escapeHtml(integration.key)}">
${head}
${access}${docs}${action}
</section>`;
  });
  const brand =
    app || view.app.logoUrl
      ? `<header class="brand" data-brand>${view.app.logoUrl ? `<img src="${escapeHtml(view.app.logoUrl)}" alt="" data-app-logo>` : ''}${
          app ? `<span data-app-name>${escapeHtml(app)}</span>` : ''
        }</header>\n`
      : '';
  const title = app ? `Connect your account to ${app}` : 'Connect an account';
  const none = `<div role="alert" data-error-code="no_integrations"><p>There is nothing to connect with this link.</p><p>Go back to ${escapeHtml(
    app ?? 'the app that sent you here',
  )} and start again; if this keeps happening, tell them.</p></div>`;
  const body = `${brand}<h1>${escapeHtml(title)}</h1>
${endUserLine(view.endUser)}<p data-expiry>Choose the service to connect. This link expires ${expiryTime(view.expiresAt, view.now)}.</p>
${sections.length ? sections.join('\n') : none}`;
  return layout({
    title,
    page: 'connect',
    body,
    theme: view.app.theme,
    stylesheet: view.app.stylesheet ?? undefined,
    icon: view.app.logoUrl ?? undefined,
    scripts: [EXPIRY_SCRIPT],
  });
}

function accessItem(line: AccessLine): string {
  const scope = line.scope ? ` data-scope="${escapeHtml(line.scope)}"` : '';
  return line.known ? `<li${scope}>${escapeHtml(line.text)}</li>` : `<li${scope} data-unknown-scope><code>${escapeHtml(line.text)}</code></li>`;
}

/**
 * In words and in UTC, which is all the server can know; EXPIRY_SCRIPT rewrites it in the
 * browser's language region and time zone.
 */
function expiryTime(expiresAt: Date, now: Date): string {
  const minutes = Math.max(1, Math.ceil((expiresAt.getTime() - now.getTime()) / 60_000));
  const words = minutes === 1 ? 'in 1 minute' : minutes < 120 ? `in ${minutes} minutes` : `in ${Math.round(minutes / 60)} hours`;
  const clock = `${String(expiresAt.getUTCHours()).padStart(2, '0')}:${String(expiresAt.getUTCMinutes()).padStart(2, '0')} UTC`;
  return `<time datetime="${escapeHtml(expiresAt.toISOString())}" data-expires>${words}, at ${clock}</time>`;
}

/**
 * Whom the app made this link for, so a person handed someone else's link (or one for another
 * of their own accounts) can tell before connecting: the display name with the email, else the
 * email, else the app's id for them. The app wrote these values; they are escaped like any text.
 */
function endUserLine(endUser: ConnectPageView['endUser']): string {
  if (!endUser) return '';
  const name = endUser.display_name?.trim();
  const email = endUser.email?.trim();
  const who = name ? (email ? `${name} (${email})` : name) : (email ?? endUser.id);
  return `<p data-end-user>Connecting for <strong>${escapeHtml(who)}</strong></p>\n`;
}
