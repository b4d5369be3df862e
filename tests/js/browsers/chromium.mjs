// Headless Chromium: Debian's /usr/bin/chromium driven by playwright-core, never a downloaded browser,
// with the flags this machine needs and a fresh profile each launch. A Playwright page already is the
// engine-neutral Page of ./index.mjs (same goto, evaluate, waitForFunction, reload and close).
import { chromium } from 'playwright-core';

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** `bfcache: true` keeps the back/forward cache on (Playwright turns it off by default). */
export function launchChromium({ bfcache = false } = {}) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
    ...(bfcache && { ignoreDefaultArgs: ['--disable-back-forward-cache'] }),
  });
}
