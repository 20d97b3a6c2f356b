import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { CHROMIUM_PATH } from '../../harness/requirements';

/** Debian's Chromium, headless, with a fresh temporary profile (Playwright's default); nothing is downloaded. */
export async function launchChromium(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    browser,
    close: async () => {
      await browser.close().catch(() => undefined);
    },
  };
}

/** A page context signed in to the sample's console (HTTP Basic). */
export function signedIn(browser: Browser, password = 'outbox'): Promise<BrowserContext> {
  return browser.newContext({ httpCredentials: { username: 'operator', password } });
}
