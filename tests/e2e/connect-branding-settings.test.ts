import { LOGO_MAX_BYTES, themeStylesheet } from '../../api/services/connect-branding';
import { startImageServer, solidPng, type ImageServer } from '../support/image-server';
import { startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * The Connect page's branding as `PATCH /environment` takes it: a colour is a hex colour, a
 * logo is fetched once through the `assets` egress (its address policy, no redirects, a size
 * cap, PNG/JPEG/WebP by their bytes), stored and served by Weft; anything refused is a 400 with
 * a stable code and changes nothing. And an integration's docs link.
 */
describe('Connect page branding settings', () => {
  let stack: WeftStack;
  let images: ImageServer;
  /** Not in the assets allow-list: loopback, refused like any private address. */
  let elsewhere: ImageServer;
  const png = solidPng(64, 32, [200, 30, 90]);

  beforeAll(async () => {
    images = await startImageServer({
      '/logo.png': { type: 'image/png', body: png },
      // The bytes decide, not the declared type.
      '/logo-declared-octets': { type: 'application/octet-stream', body: png },
      '/logo.svg': { type: 'image/svg+xml', body: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>' },
      '/svg-as-png': { type: 'image/png', body: '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>' },
      '/page.html': { type: 'text/html', body: '<!doctype html><p>not an image</p>' },
      // The declared length says too large: refused before reading.
      '/huge-declared.png': { type: 'image/png', body: Buffer.concat([png, Buffer.alloc(LOGO_MAX_BYTES)]) },
      // No declared length (chunked): refused once the read passes the cap.
      '/huge-chunked.png': { type: 'image/png', body: Buffer.concat([png, Buffer.alloc(LOGO_MAX_BYTES)]), headers: { 'transfer-encoding': 'chunked' } },
      '/moved': { status: 302, headers: { location: '/logo.png' } },
    });
    elsewhere = await startImageServer({ '/logo.png': { type: 'image/png', body: png } });
    stack = await startWeftStack({ worker: false, egressAllow: { assets: [images.url] } });
  });
  afterAll(async () => {
    await stack?.shutdown();
    await images?.close();
    await elsewhere?.close();
  });

  const branding = async () => (await stack.api('GET', '/environment')).body.data.branding;
  const patch = (b: Record<string, unknown>) => stack.api('PATCH', '/environment', { body: { branding: b } });

  test('defaults: nothing set, light theme', async () => {
    expect(await branding()).toEqual({ app_name: null, logo_url: null, logo: null, primary_color: null, theme: 'light' });
  });

  test('a branding is set, shown, its logo served by Weft; fields not given stay, null clears', async () => {
    const res = await patch({ app_name: '  Acme Notes ', logo_url: `${images.url}/logo.png`, primary_color: '#0F766E', theme: 'dark' });
    expect(res.status).toBe(200);
    const b = res.body.data.branding;
    expect(b).toMatchObject({ app_name: 'Acme Notes', logo_url: `${images.url}/logo.png`, primary_color: '#0f766e', theme: 'dark' });
    expect(b.logo).toMatchObject({ content_type: 'image/png', size: png.length });
    expect(b.logo.url).toMatch(/^\/connect\/assets\/logos\/[0-9a-f]{64}\.png$/);
    expect(await branding()).toEqual(b);

    const served = await fetch(`${stack.apiUrl}${b.logo.url}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('cache-control')).toContain('immutable');
    expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);
    // Named by content: another hash or another extension serves nothing.
    expect((await fetch(`${stack.apiUrl}${b.logo.url.replace('.png', '.webp')}`)).status).toBe(404);
    expect((await fetch(`${stack.apiUrl}/connect/assets/logos/${'0'.repeat(64)}.png`)).status).toBe(404);

    // #rgb is #rrggbb; only the theme changes.
    const themed = await patch({ theme: 'auto', primary_color: '#abc' });
    expect(themed.body.data.branding).toEqual({ ...b, theme: 'auto', primary_color: '#aabbcc' });
    // Fetched once: the page never calls the logo's server again.
    const fetches = images.hits.filter((h) => h === '/logo.png').length;
    expect(fetches).toBe(1);

    const cleared = await patch({ logo_url: null, app_name: null, primary_color: null });
    expect(cleared.body.data.branding).toEqual({ app_name: null, logo_url: null, logo: null, primary_color: null, theme: 'auto' });
    // No environment names the logo any more: its bytes are gone.
    expect((await fetch(`${stack.apiUrl}${b.logo.url}`)).status).toBe(404);

    const octets = await patch({ logo_url: `${images.url}/logo-declared-octets` });
    expect(octets.status).toBe(200);
    expect(octets.body.data.branding.logo.content_type).toBe('image/png');
  });

  test('refusals: a clear 400 with a stable code, and nothing changed (the other fields of the patch neither)', async () => {
    expect((await patch({ app_name: 'Before', logo_url: `${images.url}/logo.png`, primary_color: '#123456', theme: 'light' })).status).toBe(200);
    const before = await branding();
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ primary_color: '#12345g' }, 'invalid_body', /branding\.primary_color|#rrggbb/],
      [{ primary_color: 'red' }, 'invalid_body', /#rrggbb/],
      [{ theme: 'sepia' }, 'invalid_body', /theme/],
      [{ app_name: 'x'.repeat(81) }, 'invalid_body', /app_name/],
      [{ logo_url: 'javascript:alert(1)' }, 'invalid_body', /logo_url/],
      [{ colour: '#123456' }, 'invalid_body', /colour/],
      // A literal private address, and a name resolving to loopback on a port not allowed.
      [{ app_name: 'After', logo_url: 'http://10.20.0.5/logo.png' }, 'egress_refused', /WEFT_EGRESS_ALLOW_ASSETS/],
      [{ app_name: 'After', logo_url: 'http://169.254.169.254/latest/meta-data' }, 'egress_refused', /metadata|WEFT_EGRESS_ALLOW_ASSETS/],
      [{ app_name: 'After', logo_url: `${elsewhere.url.replace('127.0.0.1', 'localhost')}/logo.png` }, 'egress_refused', /WEFT_EGRESS_ALLOW_ASSETS/],
      [{ app_name: 'After', logo_url: `${images.url}/page.html` }, 'logo_type_unsupported', /not a PNG, JPEG or WebP/],
      [{ app_name: 'After', logo_url: `${images.url}/logo.svg` }, 'logo_type_unsupported', /SVG/],
      [{ app_name: 'After', logo_url: `${images.url}/svg-as-png` }, 'logo_type_unsupported', /SVG/],
      [{ app_name: 'After', logo_url: `${images.url}/huge-declared.png` }, 'logo_too_large', /256 KB/],
      [{ app_name: 'After', logo_url: `${images.url}/huge-chunked.png` }, 'logo_too_large', /256 KB/],
      [{ app_name: 'After', logo_url: `${images.url}/missing.png` }, 'logo_fetch_failed', /answered 404/],
      [{ app_name: 'After', logo_url: `${images.url}/moved` }, 'logo_fetch_failed', /redirect/],
    ];
    for (const [body, code, message] of cases) {
      const res = await patch(body);
      expect({ body, status: res.status, code: res.body?.error?.code }).toEqual({ body, status: 400, code });
      expect(JSON.stringify(res.body.error)).toMatch(message);
      expect(await branding()).toEqual(before);
    }
    // The webhook fields of a refused patch are not stored either.
    const mixed = await stack.api('PATCH', '/environment', { body: { send_auth_webhooks: false, branding: { logo_url: `${images.url}/page.html` } } });
    expect(mixed.status).toBe(400);
    expect((await stack.api('GET', '/environment')).body.data.send_auth_webhooks).toBe(true);
  });

  test('the colour stylesheet: any #rrggbb, readable text on it, nothing else', async () => {
    const css = await fetch(`${stack.apiUrl}/connect/assets/theme/0f766e.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).toBe(':root{--primary:#0f766e;--on-primary:#fff}\n');
    expect(themeStylesheet('fde047.css')).toBe(':root{--primary:#fde047;--on-primary:#111}\n'); // light yellow: dark text
    for (const bad of ['0F766E.css', '0f766.css', 'red.css', '0f766e.css%3Bx', '..%2Fx.css']) {
      expect((await fetch(`${stack.apiUrl}/connect/assets/theme/${bad}`)).status).toBe(404);
    }
  });

  test('provider logos come from the integration folders; unknown providers have none', async () => {
    const svg = await fetch(`${stack.apiUrl}/connect/assets/providers/luma/logo.svg`);
    expect(svg.status).toBe(200);
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    // Served under the same policy as every answer: nothing in it could run.
    expect(svg.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await svg.text()).toMatch(/^<svg /);
    expect((await fetch(`${stack.apiUrl}/connect/assets/providers/nope/logo.svg`)).status).toBe(404);
    expect((await fetch(`${stack.apiUrl}/connect/assets/providers/__proto__/logo.svg`)).status).toBe(404);
  });

  test("an integration's docs link: set at creation, changed, cleared; only http(s)", async () => {
    const created = await stack.api('POST', '/integrations', {
      body: { unique_key: 'luma-docs', provider: 'luma', docs_url: 'https://help.example.com/luma' },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.docs_url).toBe('https://help.example.com/luma');
    const bad = await stack.api('PATCH', '/integrations/luma-docs', { body: { docs_url: 'javascript:alert(1)' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_body');
    const changed = await stack.api('PATCH', '/integrations/luma-docs', { body: { docs_url: 'https://help.example.com/luma-2' } });
    expect(changed.body.data.docs_url).toBe('https://help.example.com/luma-2');
    const cleared = await stack.api('PATCH', '/integrations/luma-docs', { body: { docs_url: null } });
    expect(cleared.body.data.docs_url).toBeNull();
    expect((await stack.api('GET', '/integrations/luma-docs')).body.data.docs_url).toBeNull();
  });
});
