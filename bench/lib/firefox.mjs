// Headless Firefox for the bench: Debian's /usr/bin/firefox-esr (never a downloaded browser) over
// WebDriver BiDi through puppeteer-core (Playwright's Firefox needs its own patched build). Its pages
// take Playwright's signatures for what openBenchPage uses, so one code path drives both browsers.
import puppeteer from 'puppeteer-core';

export async function launchFirefox() {
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr',
    headless: true,
  });
  // "firefox/153.8.0": the number only, as Playwright's Chromium gives it.
  const version = (await browser.version()).replace(/^firefox\//, '');
  return {
    version: () => version,
    /** A page in a browser context of its own (no storage shared with other pages), as Playwright's `newPage()`. */
    async newPage() {
      const context = await browser.createBrowserContext();
      const page = await context.newPage();
      return {
        goto: (url) => page.goto(url),
        evaluate: (fn, arg) => page.evaluate(fn, arg),
        // Puppeteer takes the options before the argument, Playwright after it.
        waitForFunction: (fn, arg, { timeout } = {}) => page.waitForFunction(fn, { timeout }, arg),
        on: (event, handler) => page.on(event, handler),
        setDefaultTimeout: (ms) => page.setDefaultTimeout(ms),
        close: () => context.close(),
      };
    },
    close: () => browser.close(),
  };
}
