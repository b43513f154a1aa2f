/**
 * Minimal, accessible HTML for the simulated github.com pages: every input has a <label>,
 * every group of radios a <fieldset>/<legend>, errors are role="alert", and forms are plain
 * POSTs, so a real browser (Playwright) and a fetch-based test can both drive them.
 */

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Tagged template that escapes every interpolated value unless it is `Html` already. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1];
  });
  return new Html(out);
}

function render(v: unknown): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function hidden(name: string, value: string): Html {
  return html`<input type="hidden" name="${name}" value="${value}">`;
}

const STYLE = `
body{font:14px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;margin:0;background:#f6f8fa;color:#1f2328}
header{background:#24292f;color:#fff;padding:12px 24px;display:flex;justify-content:space-between}
header a{color:#fff;font-weight:600;text-decoration:none}
main{max-width:560px;margin:32px auto;background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:24px}
label{display:block;font-weight:600;margin:12px 0 4px}
fieldset label{display:inline;font-weight:400;margin:0 0 0 4px}
fieldset div{margin:6px 0}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:6px 8px;border:1px solid #d0d7de;border-radius:6px}
button{margin:16px 8px 0 0;padding:6px 16px;border-radius:6px;border:1px solid #d0d7de;background:#f6f8fa;font-weight:600;cursor:pointer}
button.primary{background:#1f883d;color:#fff;border-color:#1a7f37}
[role=alert]{background:#ffebe9;border:1px solid #ff8182;border-radius:6px;padding:8px 12px}
`;

/** The page frame: `<title>`, a banner naming the signed-in user, one `<main>`. */
export function page(opts: { title: string; signedInAs?: string | null; body: Html }): string {
  const who = opts.signedInAs ? html`<span>Signed in as <strong>${opts.signedInAs}</strong> · <a href="/logout">Sign out</a></span>` : html``;
  return `<!DOCTYPE html>\n${
    html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · GitHub</title>
<style>${new Html(STYLE)}</style>
</head>
<body>
<header role="banner"><a href="/login">GitHub (sandbox)</a>${who}</header>
<main id="main">
${opts.body}
</main>
</body>
</html>
`.value
  }`;
}
