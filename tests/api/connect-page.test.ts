import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * The Connect page names the end user the app made the session for (`end_user`), so the
 * person holding the link sees whose account it connects before choosing a service.
 */
describe('the Connect page names its end user', () => {
  let stack: WeftStack;

  beforeAll(async () => {
    stack = await startWeftStack({ worker: false });
    await createLumaIntegration(stack);
  });
  afterAll(async () => stack?.shutdown());

  async function connectPage(endUser?: { id: string; email?: string; display_name?: string }): Promise<string> {
    const created = await stack.api('POST', '/connect/sessions', { body: { allowed_integrations: ['luma'], ...(endUser ? { end_user: endUser } : {}) } });
    expect(created.status).toBe(201);
    const token = (created.body as { data: { token: string } }).data.token;
    const res = await fetch(`${stack.apiUrl}/connect?session_token=${encodeURIComponent(token)}`);
    expect(res.status).toBe(200);
    return res.text();
  }
  const endUserLine = (html: string) => /<p data-end-user>(.*?)<\/p>/.exec(html)?.[1] ?? null;
  const tags = (html: string, name: string) => html.match(new RegExp(`<${name}\\b[^>]*>`, 'gi')) ?? [];

  test('display name and email; email alone; id alone; no end user, no line', async () => {
    expect(endUserLine(await connectPage({ id: 'u-1', email: 'jane@example.com', display_name: 'Jane Doe' }))).toBe(
      'Connecting for <strong>Jane Doe (jane@example.com)</strong>',
    );
    expect(endUserLine(await connectPage({ id: 'u-1', display_name: 'Jane Doe' }))).toBe('Connecting for <strong>Jane Doe</strong>');
    expect(endUserLine(await connectPage({ id: 'u-2', email: 'sam@example.com', display_name: '  ' }))).toBe('Connecting for <strong>sam@example.com</strong>');
    expect(endUserLine(await connectPage({ id: 'customer-42' }))).toBe('Connecting for <strong>customer-42</strong>');
    const without = await connectPage();
    expect(without).toContain('data-page="connect"');
    expect(endUserLine(without)).toBeNull();
  });

  test("the app's values are text: markup in them is escaped and nothing runs", async () => {
    const html = await connectPage({ id: '"><img src=x onerror=alert(1)>', display_name: '<script>alert("jane")</script> & Co' });
    expect(endUserLine(html)).toBe('Connecting for <strong>&lt;script&gt;alert(&quot;jane&quot;)&lt;/script&gt; &amp; Co</strong>');
    // The page's own markup: one script (the expiry's, allowed by hash), the provider's logo; nothing of the app's.
    expect(tags(html, 'script')).toEqual(['<script>']);
    expect(tags(html, 'img')).toEqual(['<img src="/connect/assets/providers/luma/logo.svg" alt="" width="40" height="40" data-provider-logo>']);
    const byId = await connectPage({ id: '"><img src=x onerror=alert(1)>' });
    expect(endUserLine(byId)).toBe('Connecting for <strong>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</strong>');
    expect(tags(byId, 'img')).toEqual(['<img src="/connect/assets/providers/luma/logo.svg" alt="" width="40" height="40" data-provider-logo>']);
  });
});
