export interface Page {
  status: number;
  url: string;
  location: string | null;
  html: string;
  headers: Headers;
}

/**
 * One browser, by hand: cookies kept per host (Weft and the simulated github.com both live on
 * 127.0.0.1, as a browser would see them), forms read from the HTML. Enough to tell two
 * browsers apart and to walk the GitHub install page without Chromium.
 */
export class Browser {
  readonly cookies = new Map<string, string>();

  async request(url: string, form?: Record<string, string>): Promise<Page> {
    const headers: Record<string, string> = { accept: 'text/html' };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(url, { method: form ? 'POST' : 'GET', headers, body: form ? new URLSearchParams(form).toString() : undefined, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const i = pair.indexOf('=');
      if (attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(pair.slice(0, i).trim());
      else this.cookies.set(pair.slice(0, i).trim(), pair.slice(i + 1).trim());
    }
    return { status: res.status, url, location: res.headers.get('location'), html: await res.text(), headers: res.headers };
  }

  /** Follows redirects while they stay under `origin`. */
  async follow(page: Page, origin: string): Promise<Page> {
    for (let i = 0; i < 10 && page.status === 302 && page.location?.startsWith(origin); i++) page = await this.request(page.location);
    return page;
  }

  async submit(page: Page, action: RegExp, fields: Record<string, string>): Promise<Page> {
    const origin = new URL(page.url).origin;
    for (const m of page.html.matchAll(/<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/g)) {
      if (!action.test(m[1])) continue;
      const hidden = Object.fromEntries(
        [...m[2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((h) => [h[1], h[2].replace(/&amp;/g, '&')]),
      );
      return this.request(new URL(m[1].replace(/&amp;/g, '&'), origin).href, { ...hidden, ...fields });
    }
    throw new Error(`no form ${action} on ${page.url}:\n${page.html}`);
  }
}
