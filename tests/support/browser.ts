import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core (no browser download: `.ci/run` installs the
 * `chromium` package). WEFT_CHROMIUM overrides the path.
 */
function chromiumPath(): string {
  const candidates = [process.env.WEFT_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => Boolean(p));
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`No Chromium found (tried ${candidates.join(', ')}); install Debian's chromium package or set WEFT_CHROMIUM.`);
  return found;
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Containers run as root without user namespaces; nothing here leaves 127.0.0.1.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

/** The outcome of a connect flow, from the result page's data attributes. */
export async function connectResult(page: Page): Promise<{ result: string | null; code: string | null; connectionId: string | null; message: string | null }> {
  const main = page.locator('main[data-page="connect-result"]');
  await main.waitFor();
  return {
    result: await main.getAttribute('data-result'),
    code: await main.getAttribute('data-error-code'),
    connectionId: await main.getAttribute('data-connection-id'),
    // What the person reads first: the status line of a success, the alert's first line of a failure.
    message: await main.locator('[role=status], [role=alert] p').first().textContent(),
  };
}
