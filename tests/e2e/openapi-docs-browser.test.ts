import type { Browser, ConsoleMessage } from 'playwright-core';
import { launchBrowser } from '../support/browser';
import { startWeftStack, type WeftStack } from '../support/weft-stack';

/**
 * `/docs` in Chromium: Swagger UI renders the document's operations under the page's
 * Content-Security-Policy, nothing is refused, and no request leaves Weft (offline).
 */
describe('/docs in Chromium', () => {
  let stack: WeftStack;
  let browser: Browser;

  beforeAll(async () => {
    stack = await startWeftStack({ worker: false });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.shutdown();
  });

  test('renders every tag and the operations, only from Weft, nothing refused', async () => {
    const page = await browser.newPage();
    const refusals: string[] = [];
    page.on('console', (m: ConsoleMessage) => {
      if (/Refused to|Content Security Policy/i.test(m.text())) refusals.push(m.text());
    });
    const origins = new Set<string>();
    page.on('request', (r) => void origins.add(new URL(r.url()).origin));
    await page.goto(`${stack.apiUrl}/docs`);
    await page.locator('.opblock-tag-section').first().waitFor({ timeout: 20_000 });
    expect(await page.locator('.info .title').innerText()).toContain('Weft API');
    const tags = await page.locator('.opblock-tag').allInnerTexts();
    for (const tag of ['Integrations', 'Connections', 'Records', 'Syncs', 'Actions', 'Proxy', 'Operation endpoints']) {
      expect(tags.some((t) => t.startsWith(tag))).toBe(true);
    }
    expect(await page.locator('.opblock').count()).toBeGreaterThan(40);
    expect(refusals).toEqual([]);
    expect([...origins]).toEqual([stack.apiUrl]);
    await page.close();
  }, 60_000);
});
