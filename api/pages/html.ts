/**
 * The few server-rendered pages of the connect flow: plain, accessible HTML with no
 * scripts besides closing a popup. Every page names itself (`data-page`) and its outcome
 * (`data-result`, `data-error-code`) so apps and tests can tell them apart without
 * reading prose.
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/**
 * The only inline style and script of the pages. They are constants because the
 * Content-Security-Policy allows exactly these by hash (api/middleware/security-headers.ts):
 * nothing else inline runs, whatever a page ends up containing.
 */
export const PAGE_STYLE = `
body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#1a1a1a}
section{border:1px solid #ccc;border-radius:6px;padding:1rem;margin:1rem 0}
a.button,button{display:inline-block;padding:.5rem 1rem;border-radius:4px;border:1px solid #1a56db;background:#1a56db;color:#fff;text-decoration:none;font-size:1rem;cursor:pointer}
label{display:block;margin:.5rem 0 .25rem}
input[type=password],input[type=text]{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
[role=alert]{border-left:4px solid #b91c1c;padding:.5rem 1rem;background:#fef2f2}
code{background:#f3f4f6;padding:0 .25rem}
`;
export const CLOSE_POPUP_SCRIPT = 'if (window.opener) window.close();';

export function layout(opts: { title: string; page: string; body: string; attrs?: Record<string, string> }): string {
  const attrs = Object.entries(opts.attrs ?? {})
    .map(([k, v]) => ` ${k}="${escapeHtml(v)}"`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(opts.title)}</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<main data-page="${escapeHtml(opts.page)}"${attrs}>
${opts.body}
</main>
</body>
</html>`;
}

/** The end of a flow: what happened, and for failures what to do next. */
export function resultPage(opts: { success: boolean; title: string; message: string; code?: string; next?: string; connectionId?: string }): string {
  const attrs: Record<string, string> = { 'data-result': opts.success ? 'success' : 'error' };
  if (opts.code) attrs['data-error-code'] = opts.code;
  if (opts.connectionId) attrs['data-connection-id'] = opts.connectionId;
  const body = [
    `<h1>${escapeHtml(opts.title)}</h1>`,
    opts.success
      ? `<p role="status">${escapeHtml(opts.message)}</p>`
      : `<div role="alert"><p>${escapeHtml(opts.message)}</p>${opts.code ? `<p>Error code: <code>${escapeHtml(opts.code)}</code></p>` : ''}</div>`,
    opts.next ? `<p>${escapeHtml(opts.next)}</p>` : '',
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
