// Headless Firefox: Debian's firefox-esr driven over WebDriver BiDi by puppeteer-core (Playwright's
// Firefox needs its own patched build). Each page gets its own browser context, so pages share no
// storage, as Playwright's `browser.newPage()` gives in Chromium.
import puppeteer from 'puppeteer-core';
import { CLOSED_TAB_GRACE_MS } from './closed-tab.mjs';

export async function launchFirefox() {
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr',
    headless: true,
  });
  return {
    async newPage() {
      const context = await browser.createBrowserContext();
      return firefoxPage(context, await context.newPage());
    },
    close: () => browser.close(),
  };
}

function firefoxPage(context, page) {
  return {
    goto: (url) => page.goto(url),
    evaluate: (fn, arg) => page.evaluate(fn, arg),
    // Puppeteer takes the options before the argument, Playwright after it.
    waitForFunction: (fn, arg, { timeout = 30_000 } = {}) => page.waitForFunction(fn, { timeout }, arg),
    reload: () => page.reload(),
    setOffline: (offline) => page.setOfflineMode(offline),
    // Not page.goBack(): it waits for a load event, and a page restored from the back/forward cache
    // fires none.
    goBack: () => page.evaluate(() => {
      history.back();
    }),
    /**
     * `runBeforeUnload`: closed as a user closes a tab, unload events and all; its context then outlives it
     * for a moment, as a user's browser does (the launcher's close() ends it sooner if it comes first).
     */
    async close({ runBeforeUnload = false } = {}) {
      if (!runBeforeUnload) return context.close();
      await page.close({ runBeforeUnload });
      setTimeout(() => context.close().catch(() => {}), CLOSED_TAB_GRACE_MS).unref();
    },
  };
}
