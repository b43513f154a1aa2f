import type { Browser, ConsoleMessage, Page } from 'playwright-core';
import { LUMA_DEFAULT_API_KEY } from '../../sandbox/luma';
import { launchBrowser } from '../support/browser';
import { createLumaIntegration, startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * The Content-Security-Policy as Chromium enforces it: the Connect page opened as the app's
 * popup keeps its style and its popup-closing script (allowed by hash), nothing is refused
 * on the way, and no other site can frame the page.
 */
describe('Connect page under its Content-Security-Policy, in Chromium', () => {
  let stack: WeftStack;
  let browser: Browser;

  beforeAll(async () => {
    stack = await startWeftStack({ worker: false });
    await createLumaIntegration(stack);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.shutdown();
  });

  async function connectLink(): Promise<string> {
    const res = await stack.api('POST', '/connect/sessions', { body: { allowed_integrations: ['luma'] } });
    expect(res.status).toBe(201);
    return res.body.data.connect_link;
  }

  /** Console messages of CSP refusals ("Refused to ... because it violates ..."). */
  function watchRefusals(page: Page, into: string[]) {
    page.on('console', (m: ConsoleMessage) => {
      if (/Refused to|Content Security Policy/i.test(m.text())) into.push(m.text());
    });
  }

  test('as the app popup: styled, connects, closes itself, nothing refused', async () => {
    const context = await browser.newContext();
    const refusals: string[] = [];
    try {
      const app = await context.newPage();
      await app.goto('about:blank');
      const [popup] = await Promise.all([
        context.waitForEvent('page'),
        app.evaluate((url) => void (globalThis as any).open(url, 'weft-connect'), await connectLink()),
      ]);
      watchRefusals(popup, refusals);
      await popup.waitForSelector('main[data-page="connect"]');
      // The inline stylesheet applied (the button is blue, not the browser's grey).
      const background = await popup
        .locator('section[data-integration="luma"] button')
        .evaluate((b) => (globalThis as any).getComputedStyle(b).backgroundColor as string);
      expect(background).toBe('rgb(26, 86, 219)');

      await popup.fill('input[name="apiKey"]', LUMA_DEFAULT_API_KEY);
      const closed = popup.waitForEvent('close', { timeout: 15_000 });
      await popup.click('section[data-integration="luma"] button');
      // The result page's inline script ran (window.opener survived: no COOP) and closed the popup.
      await closed;
      expect(refusals).toEqual([]);
      const connections = (await stack.api('GET', '/connections?integrationId=luma')).body.connections;
      expect(connections).toHaveLength(1);
    } finally {
      await context.close();
    }
  });

  test('another site cannot frame the Connect page', async () => {
    const context = await browser.newContext();
    const refusals: string[] = [];
    try {
      const site = await context.newPage();
      watchRefusals(site, refusals);
      const link = await connectLink();
      await site.setContent(`<iframe id="weft" src="${link}" width="600" height="400"></iframe>`);
      await site.waitForFunction(() => {
        const f = (globalThis as any).document.getElementById('weft');
        return f && f.contentWindow !== null;
      });
      const until = Date.now() + 10_000;
      while (!refusals.some((r) => /frame-ancestors/.test(r)) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(refusals.filter((r) => /frame-ancestors 'none'/.test(r))).toHaveLength(1);
      const framed = site.frames().find((f) => f !== site.mainFrame());
      const rendered = framed
        ? await framed
            .locator('main[data-page="connect"]')
            .count()
            .catch(() => 0)
        : 0;
      expect(rendered).toBe(0);
    } finally {
      await context.close();
    }
  });
});
