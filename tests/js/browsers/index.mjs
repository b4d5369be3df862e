// The browser engines the package's browser tests run in, behind one small Page interface, so a test
// is written once and runs in each: Chromium (Chrome, Edge), Firefox, and WebKit (Safari's engine).
//
// Page: `goto(url)` (resolves after the load event), `evaluate(fn, arg)` (runs `fn(arg)` in the page and
// resolves to its awaited result; `arg` and the result must survive JSON, so no RegExps or functions),
// `waitForFunction(fn, arg, { timeout })`, `reload()`, `goBack()` (resolves once the navigation starts:
// a page restored from the back/forward cache fires no load event) and `close({ runBeforeUnload })`.
// Chromium and Firefox pages also have `setOffline(offline)`, and Chromium's `cdp()`. Each page is
// fresh: no storage shared with another page. What goes wrong inside a page: `pageProblems(page)`.
//
// LLM_UX_ENGINES=chromium,webkit (say) runs a subset.
import { describe, before, after } from 'node:test';
import { launchChromiumEngine } from './chromium.mjs';
import { launchFirefox } from './firefox.mjs';
import { launchWebKit } from './webkit.mjs';

const LAUNCHERS = { chromium: launchChromiumEngine, firefox: launchFirefox, webkit: launchWebKit };

export const ENGINES = (process.env.LLM_UX_ENGINES ?? 'chromium,firefox,webkit').split(',').map((name) => {
  if (!LAUNCHERS[name]) throw new Error(`LLM_UX_ENGINES: unknown engine ${name} (known: ${Object.keys(LAUNCHERS).join(', ')})`);
  return name;
});

/** Starts `engine`; resolves to a browser with `newPage()` and `close()`. */
export const launch = (engine) => LAUNCHERS[engine]();

/**
 * Registers `suite(engine, browser)` once per engine, as a `describe` named after it: the engine is
 * launched before the suite's tests and closed after them; `browser.newPage()` opens a page in it.
 */
export function forEachEngine(suite) {
  for (const engine of ENGINES) {
    describe(engine, () => {
      let launched;
      before(async () => {
        launched = await launch(engine);
      });
      after(() => launched?.close());
      suite(engine, { newPage: () => launched.newPage() });
    });
  }
}

/**
 * For node:test's `skip` option: false where `engine` is one of `engines`, otherwise the reason it cannot
 * run the test, which the test output shows.
 */
export const onlyIn = (engines, engine, reason) => (engines.includes(engine) ? false : `not in ${engine}: ${reason}`);

/**
 * The uncaught errors, unhandled rejections and console warnings and errors of a test page, as
 * `{ kind, text }`: recorded in the page by recordPageProblems() of tests/js/pages/page-problems.js, which
 * every test page calls first (classic WebDriver, WebKit's, has no page events to listen to).
 */
export const pageProblems = (page) => page.evaluate(() => globalThis.pageProblems);
