// Headless Chromium: Debian's /usr/bin/chromium driven by playwright-core, never a downloaded browser,
// with the flags this machine needs and a fresh profile each launch.
import { chromium } from 'playwright-core';

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/**
 * The Playwright browser, for the tests that run in Chromium alone. `bfcache: true` keeps the
 * back/forward cache on (Playwright turns it off by default).
 */
export function launchChromium({ bfcache = false } = {}) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
    ...(bfcache && { ignoreDefaultArgs: ['--disable-back-forward-cache'] }),
  });
}

/** Chromium behind the engine-neutral Page of ./index.mjs, plus `cdp()` (a DevTools Protocol session). */
export async function launchChromiumEngine(options) {
  const browser = await launchChromium(options);
  return {
    async newPage() {
      const page = await browser.newPage();
      return {
        goto: (url) => page.goto(url),
        evaluate: (fn, arg) => page.evaluate(fn, arg),
        waitForFunction: (fn, arg, options) => page.waitForFunction(fn, arg, options),
        reload: () => page.reload(),
        goBack: () => page.goBack({ waitUntil: 'commit' }),
        setOffline: (offline) => page.context().setOffline(offline),
        close: (options) => page.close(options),
        cdp: () => page.context().newCDPSession(page),
      };
    },
    close: () => browser.close(),
  };
}
