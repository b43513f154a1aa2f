import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core (no browser download: `.ci/run` installs the
 * `chromium` package). WEFT_CHROMIUM overrides the path.
 */
export function chromiumPath(): string {
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
