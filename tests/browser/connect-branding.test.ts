import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { launchBrowser } from '../support/browser';
import { drawnPng, startImageServer, type ImageServer } from '../support/image-server';
import { startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * A branded Connect page as the person connecting sees it, in Chromium: the app's name and
 * logo (served by Weft), whom the link is for, the expiry in words in their own time zone,
 * each provider's logo and what the app gets in plain words, the app's colour and dark theme,
 * and on a phone nothing wider than the screen. Every request stays on Weft's origin and the
 * Content-Security-Policy refuses nothing.
 *
 * WEFT_SCREENSHOTS=1 also writes docs/images/connect-branded.png and connect-branded-phone.png.
 */
describe('a branded Connect page, in Chromium', () => {
  let stack: WeftStack;
  let browser: Browser;
  let images: ImageServer;
  const TEAL = { hex: '#0f766e', rgb: 'rgb(15, 118, 110)' };
  const DARK_BACKGROUND = 'rgb(16, 19, 23)'; // [data-theme=dark] --bg in api/pages/html.ts

  beforeAll(async () => {
    images = await startImageServer({ '/acme.png': { type: 'image/png', body: acmeLogo() } });
    stack = await startWeftStack({ worker: false, egressAllow: { assets: [images.url] } });
    const luma = await stack.api('POST', '/integrations', {
      body: { unique_key: 'luma', provider: 'luma', docs_url: 'https://help.example.com/connect-luma', provider_overrides: { base_url: stack.luma.url } },
    });
    expect(luma.status).toBe(201);
    const oneDrive = await stack.api('POST', '/integrations', {
      body: {
        unique_key: 'one-drive',
        provider: 'one-drive',
        display_name: 'OneDrive',
        // Tasks.Read has no plain words in the integration's table: it is shown as it is.
        credentials: { type: 'OAUTH2', client_id: 'client-abc', client_secret: 'secret-xyz', scopes: 'Files.Read.All User.Read openid Tasks.Read' },
      },
    });
    expect(oneDrive.status).toBe(201);
    const branded = await stack.api('PATCH', '/environment', {
      body: { branding: { app_name: 'Acme Notes', logo_url: `${images.url}/acme.png`, primary_color: TEAL.hex, theme: 'dark' } },
    });
    expect(branded.status).toBe(200);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.shutdown();
    await images?.close();
  });

  async function connectLink(): Promise<string> {
    const res = await stack.api('POST', '/connect/sessions', {
      body: { allowed_integrations: ['luma', 'one-drive'], end_user: { id: 'u-42', email: 'jane@example.com', display_name: 'Jane Doe' } },
    });
    expect(res.status).toBe(201);
    return res.body.data.connect_link;
  }

  /** A page that records every CSP refusal, script error and request that leaves Weft's origin. */
  async function openPage(options: BrowserContextOptions): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    const problems: string[] = [];
    await page.addInitScript(() => {
      const g = globalThis as any;
      g.document.addEventListener('securitypolicyviolation', (e: any) => {
        g.__violations = [...(g.__violations ?? []), `${e.violatedDirective} ${e.blockedURI}`];
      });
    });
    page.on('console', (m) => {
      // Resource failures are judged by their responses below (a refused key's page is a 400 on purpose).
      if (/^Failed to load resource/.test(m.text())) return;
      if (m.type() === 'error' || /Refused to|Content Security Policy/i.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    page.on('response', (res) => {
      if (res.status() >= 400 && res.request().resourceType() !== 'document') problems.push(`${res.status()}: ${res.url()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('request', (req) => {
      if (!req.url().startsWith(stack.apiUrl)) problems.push(`request elsewhere: ${req.url()}`);
    });
    page.on('requestfailed', (req) => problems.push(`failed: ${req.url()}`));
    await page.goto(await connectLink());
    await page.waitForSelector('main[data-page="connect"]');
    await page.waitForLoadState('load');
    return { context, page, problems };
  }

  async function violations(page: Page): Promise<string[]> {
    return page.evaluate(() => (globalThis as any).__violations ?? []);
  }

  /** Whether the image was fetched and decoded (a refused or broken one has no natural width). */
  const loaded = (page: Page, selector: string) =>
    page
      .locator(selector)
      .evaluate((img: any) => img.complete && img.naturalWidth > 0 && new URL(img.currentSrc).origin === (globalThis as any).location.origin);

  test('on a desktop in Tokyo: brand, end user, local expiry, provider logos, plain words, colour, dark theme', async () => {
    const { context, page, problems } = await openPage({ timezoneId: 'Asia/Tokyo', locale: 'en-GB', viewport: { width: 1024, height: 900 } });
    try {
      expect(await page.locator('[data-app-name]').textContent()).toBe('Acme Notes');
      expect(await page.locator('h1').textContent()).toBe('Connect your account to Acme Notes');
      expect(await loaded(page, 'img[data-app-logo]')).toBe(true);
      expect(await page.locator('[data-end-user]').textContent()).toBe('Connecting for Jane Doe (jane@example.com)');

      // The expiry, rewritten by the page's script in the browser's zone: words, and the clock in Tokyo (UTC+9), not UTC.
      const time = page.locator('time[data-expires]');
      await page.waitForSelector('time[data-expires][data-local]');
      const expiresAt = new Date((await time.getAttribute('datetime')) as string);
      const tokyoClock = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'Asia/Tokyo' }).format(expiresAt);
      const text = (await time.textContent()) as string;
      expect(text).toMatch(/^in \d+ minutes, at /);
      expect(text).toContain(tokyoClock);
      expect(text).not.toContain('UTC');

      // Each provider's logo, from Weft.
      expect(await loaded(page, 'section[data-integration="luma"] img[data-provider-logo]')).toBe(true);
      expect(await loaded(page, 'section[data-integration="one-drive"] img[data-provider-logo]')).toBe(true);
      // What the app gets, in plain words; a scope without words as it is; OpenID's `openid` not at all.
      const lumaAccess = await page.locator('section[data-integration="luma"] [data-access] li').allTextContents();
      expect(lumaAccess[0]).toMatch(/events, guests and people/);
      const oneDrive = page.locator('section[data-integration="one-drive"]');
      expect(await oneDrive.locator('[data-access] li').allTextContents()).toEqual([
        'Stay connected when you are not using the app, until you disconnect it',
        'Read all the files you can open: yours and those shared with you',
        'Sign you in and read your profile',
        'Tasks.Read',
      ]);
      expect(await oneDrive.locator('li[data-unknown-scope] code').textContent()).toBe('Tasks.Read');
      expect(await oneDrive.locator('.muted').first().textContent()).toBe('Acme Notes will be able to:');
      // The integration's docs link, for the person to get help.
      expect(await page.locator('section[data-integration="luma"] a[data-docs-link]').getAttribute('href')).toBe('https://help.example.com/connect-luma');
      expect(await oneDrive.locator('a[data-docs-link]').count()).toBe(0);

      // The app's colour (from Weft's stylesheet) on the buttons, white text on it; the dark theme.
      const style = (selector: string, property: string) =>
        page.locator(selector).evaluate((el, p) => (globalThis as any).getComputedStyle(el)[p] as string, property);
      expect(await style('section[data-integration="luma"] button', 'backgroundColor')).toBe(TEAL.rgb);
      expect(await style('section[data-integration="one-drive"] a.button', 'backgroundColor')).toBe(TEAL.rgb);
      expect(await style('section[data-integration="luma"] button', 'color')).toBe('rgb(255, 255, 255)');
      expect(await style('body', 'backgroundColor')).toBe(DARK_BACKGROUND);
      expect(await page.locator('html').getAttribute('data-theme')).toBe('dark');

      // The flows' own markup is as before.
      expect(await page.getByLabel('API key').count()).toBe(1);
      expect(await page.getByRole('link', { name: 'Connect OneDrive' }).getAttribute('href')).toMatch(/^\/oauth\/connect\/one-drive\?connect_session_token=/);

      expect(await violations(page)).toEqual([]);
      expect(problems).toEqual([]);
      if (process.env.WEFT_SCREENSHOTS === '1') await screenshot(page, 'connect-branded.png');
    } finally {
      await context.close();
    }
  });

  test('on a phone: nothing wider than the screen, full-width buttons, same brand', async () => {
    const { context, page, problems } = await openPage({
      viewport: { width: 360, height: 740 },
      isMobile: true,
      hasTouch: true,
      timezoneId: 'America/Los_Angeles',
      locale: 'en-US',
    });
    try {
      const overflow = await page.evaluate(() => {
        const g = globalThis as any;
        const width = g.document.documentElement.clientWidth;
        const wider = [...g.document.querySelectorAll('body *')]
          .filter((el: any) => el.getBoundingClientRect().right > width + 0.5)
          .map((el: any) => el.tagName + (el.className ? `.${el.className}` : ''));
        return { scrollWidth: g.document.documentElement.scrollWidth, width, wider };
      });
      expect(overflow.wider).toEqual([]);
      expect(overflow.scrollWidth).toBeLessThanOrEqual(overflow.width);
      // Buttons span the card on a narrow screen (easy to tap).
      const [button, card] = await Promise.all([
        page.locator('section[data-integration="luma"] button').boundingBox(),
        page.locator('section[data-integration="luma"]').boundingBox(),
      ]);
      expect(button!.width).toBeGreaterThan(card!.width * 0.8);
      expect(await loaded(page, 'img[data-app-logo]')).toBe(true);
      // Los Angeles: the clock is written the American way, in the local zone.
      const text = (await page.locator('time[data-expires][data-local]').textContent()) as string;
      expect(text).toMatch(/^in \d+ minutes, at \d{1,2}:\d{2}\s?[AP]M P[DS]T$/);
      expect(await violations(page)).toEqual([]);
      expect(problems).toEqual([]);
      if (process.env.WEFT_SCREENSHOTS === '1') await screenshot(page, 'connect-branded-phone.png', { fullPage: false });
    } finally {
      await context.close();
    }
  });

  test('a refused API key: the result page says what failed and leads back to try again', async () => {
    const { context, page, problems } = await openPage({ viewport: { width: 800, height: 700 } });
    try {
      await page.getByLabel('API key').fill('not-a-luma-key');
      await page.getByRole('button', { name: /Connect/ }).click();
      const main = page.locator('main[data-page="connect-result"]');
      await main.waitFor();
      expect(await main.getAttribute('data-error-code')).toBe('invalid_credentials');
      await page.locator('a[data-retry]').click();
      await page.waitForSelector('main[data-page="connect"] [data-app-name]');
      expect(await page.getByLabel('API key').count()).toBe(1);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

async function screenshot(page: Page, file: string, opts: { fullPage?: boolean } = {}): Promise<void> {
  const dir = path.resolve(__dirname, '..', '..', 'docs', 'images');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, file), fullPage: opts.fullPage ?? true });
}

/** A made-up app's logo, 48×48: a teal disc with a white ring. */
function acmeLogo(): Buffer {
  return drawnPng(48, 48, (x, y) => {
    const r = Math.hypot(x - 23.5, y - 23.5);
    if (r > 23) return [16, 19, 23];
    return r > 9 && r < 15 ? [255, 255, 255] : [15, 118, 110];
  });
}
