/**
 * The few server-rendered pages of the connect flow: plain, accessible HTML whose only
 * scripts close a popup and put the link's expiry in the reader's own time zone. Every
 * page names itself (`data-page`) and its outcome (`data-result`, `data-error-code`) so
 * apps and tests can tell them apart without reading prose.
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/**
 * The only inline style and scripts of the pages. They are constants because the
 * Content-Security-Policy allows exactly these by hash (api/middleware/security-headers.ts):
 * nothing else inline runs, whatever a page ends up containing. Colours are custom
 * properties: an environment's primary colour comes from a stylesheet Weft serves
 * (`/connect/assets/theme/<rrggbb>.css`, style-src 'self'), its theme from `data-theme`.
 */
export const PAGE_STYLE = `
:root{--primary:#1a56db;--on-primary:#fff;--bg:#fff;--fg:#1a1a1a;--muted:#545b66;--border:#d0d5dd;--surface:#fff;--code:#f3f4f6;--alert-bg:#fef2f2;--alert-line:#b91c1c;color-scheme:light}
[data-theme=dark]{--bg:#101317;--fg:#e8eaed;--muted:#a9b0ba;--border:#3b4250;--surface:#171b21;--code:#262b33;--alert-bg:#3a1619;--alert-line:#f87171;color-scheme:dark}
@media (prefers-color-scheme:dark){[data-theme=auto]{--bg:#101317;--fg:#e8eaed;--muted:#a9b0ba;--border:#3b4250;--surface:#171b21;--code:#262b33;--alert-bg:#3a1619;--alert-line:#f87171;color-scheme:dark}}
*{box-sizing:border-box}
html{background:var(--bg)}
body{font-family:system-ui,sans-serif;max-width:36rem;margin:0 auto;padding:1.5rem 1rem;line-height:1.5;color:var(--fg);background:var(--bg);overflow-wrap:anywhere}
h1{font-size:1.5rem;line-height:1.25;margin:.5rem 0 1rem}
a{color:inherit}
.brand{display:flex;align-items:center;gap:.75rem;margin-bottom:.5rem;min-width:0}
.brand img{height:48px;width:auto;max-width:10rem;object-fit:contain;flex:none}
.brand span{font-weight:600;font-size:1.125rem}
section{border:1px solid var(--border);border-top:4px solid var(--primary);border-radius:8px;padding:1rem;margin:1rem 0;background:var(--surface)}
.integration-head{display:flex;align-items:center;gap:.75rem}
.integration-head img{width:40px;height:40px;flex:none;border-radius:8px}
.integration-head h2{margin:0;font-size:1.125rem;line-height:1.3}
.muted{color:var(--muted);font-size:.9375rem;margin:.75rem 0 .25rem}
.access{margin:.25rem 0 .75rem;padding-left:1.25rem}
.access li{margin:.125rem 0}
a.button,button{display:inline-block;max-width:100%;padding:.625rem 1rem;border-radius:6px;border:1px solid var(--primary);background:var(--primary);color:var(--on-primary);text-decoration:none;font:inherit;font-size:1rem;text-align:center;cursor:pointer}
a.button:focus-visible,button:focus-visible,input:focus-visible,a:focus-visible{outline:3px solid var(--primary);outline-offset:2px}
label{display:block;margin:.5rem 0 .25rem}
input[type=password],input[type=text]{width:100%;padding:.5rem;font:inherit;font-size:1rem;border:1px solid var(--border);border-radius:6px;background:var(--bg);color:var(--fg)}
[role=alert]{border-left:4px solid var(--alert-line);padding:.5rem 1rem;background:var(--alert-bg)}
code{background:var(--code);padding:0 .25rem;border-radius:3px}
@media (max-width:30rem){body{padding:1rem .75rem}a.button,button{display:block;width:100%}}
`;
export const CLOSE_POPUP_SCRIPT = 'if (window.opener) window.close();';

/**
 * The Connect page's expiry in the end user's own words and time zone, which only their
 * browser knows: the server writes the time in UTC inside `<time datetime>`, this rewrites it
 * with Intl (the page's language, the browser's region and zone), and once the link has
 * expired says what to do instead.
 */
export const EXPIRY_SCRIPT = `(() => {
  const t = document.querySelector('time[data-expires]');
  if (!t) return;
  const at = new Date(t.getAttribute('datetime'));
  const lang = document.documentElement.lang || 'en';
  const own = (navigator.languages || [navigator.language]).filter((l) => l && l.split('-')[0] === lang);
  const locales = own.length ? own : [lang];
  const clock = new Intl.DateTimeFormat(locales, { hour: 'numeric', minute: '2-digit', timeZoneName: 'short' });
  const words = new Intl.RelativeTimeFormat(locales, { numeric: 'auto' });
  const show = () => {
    const ms = at.getTime() - Date.now();
    if (ms <= 0) {
      const p = t.closest('p');
      p.setAttribute('role', 'alert');
      p.setAttribute('data-expired', '');
      p.textContent = 'This link has expired. Go back to the app that sent you here to get a new one.';
      return;
    }
    const minutes = Math.ceil(ms / 60000);
    const when = minutes < 120 ? words.format(minutes, 'minute') : words.format(Math.round(minutes / 60), 'hour');
    t.textContent = when + ', at ' + clock.format(at);
    t.title = new Intl.DateTimeFormat(locales, { dateStyle: 'full', timeStyle: 'long' }).format(at);
    t.setAttribute('data-local', '');
    setTimeout(show, Math.min(ms, 30000));
  };
  show();
})();`;

export type PageTheme = 'light' | 'dark' | 'auto';

export function layout(opts: {
  title: string;
  page: string;
  body: string;
  attrs?: Record<string, string>;
  /** `data-theme` of the document (light when absent). */
  theme?: PageTheme;
  /** A stylesheet of Weft's own origin, after the page's style (the environment's colour). */
  stylesheet?: string;
  /** The tab's icon, an image of Weft's own origin (the app's logo). */
  icon?: string;
  /** Inline scripts, each one of the constants above (the policy allows nothing else). */
  scripts?: string[];
}): string {
  const attrs = Object.entries(opts.attrs ?? {})
    .map(([k, v]) => ` ${k}="${escapeHtml(v)}"`)
    .join('');
  const stylesheet =
    (opts.stylesheet ? `\n<link rel="stylesheet" href="${escapeHtml(opts.stylesheet)}">` : '') +
    (opts.icon ? `\n<link rel="icon" href="${escapeHtml(opts.icon)}">` : '');
  const scripts = (opts.scripts ?? []).map((s) => `\n<script>${s}</script>`).join('');
  return `<!doctype html>
<html lang="en" data-theme="${escapeHtml(opts.theme ?? 'light')}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(opts.title)}</title>
<style>${PAGE_STYLE}</style>${stylesheet}
</head>
<body>
<main data-page="${escapeHtml(opts.page)}"${attrs}>
${opts.body}
</main>${scripts}
</body>
</html>`;
}

/** The end of a flow: what happened, and for failures what to do next. */
export function resultPage(opts: {
  success: boolean;
  title: string;
  message: string;
  code?: string;
  next?: string;
  connectionId?: string;
  /** A failure the person can try again from: a link back to where they came from. */
  retry?: { href: string; label: string };
}): string {
  const attrs: Record<string, string> = { 'data-result': opts.success ? 'success' : 'error' };
  if (opts.code) attrs['data-error-code'] = opts.code;
  if (opts.connectionId) attrs['data-connection-id'] = opts.connectionId;
  const body = [
    `<h1>${escapeHtml(opts.title)}</h1>`,
    opts.success
      ? `<p role="status">${escapeHtml(opts.message)}</p>`
      : `<div role="alert"><p>${escapeHtml(opts.message)}</p>${opts.code ? `<p>Error code: <code>${escapeHtml(opts.code)}</code></p>` : ''}</div>`,
    opts.next ? `<p>${escapeHtml(opts.next)}</p>` : '',
    !opts.success && opts.retry ? `<p><a class="button" href="${escapeHtml(opts.retry.href)}" data-retry>${escapeHtml(opts.retry.label)}</a></p>` : '',
    opts.success ? `<p>You can close this window.</p><script>${CLOSE_POPUP_SCRIPT}</script>` : '',
  ].join('\n');
  return layout({ title: opts.title, page: 'connect-result', body, attrs });
}

/**
 * The success page of every way to connect (OAuth, GitHub App install, API key): one
 * wording, naming the integration as the app configured it.
 */
export function connectedPage(opts: { integrationName: string; connectionId: string; appInstalled?: boolean }): string {
  return resultPage({
    success: true,
    title: 'Connected',
    message: opts.appInstalled
      ? `The ${opts.integrationName} app is installed and your account is connected.`
      : `Your ${opts.integrationName} account is connected.`,
    connectionId: opts.connectionId,
  });
}
