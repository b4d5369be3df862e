// A client of classic W3C WebDriver (HTTP and JSON): just the commands the engine-neutral Page needs.
// https://www.w3.org/TR/webdriver2/

/** One session at `driverUrl`; `capabilities` go in `alwaysMatch`. */
export async function newSession(driverUrl, capabilities) {
  const { sessionId } = await command(driverUrl, 'POST', '/session', { capabilities: { alwaysMatch: capabilities } });
  const session = (method, path, body) => command(driverUrl, method, `/session/${sessionId}${path}`, body);
  // Evaluations wait as long as the test lets them; the test's own timeout bounds them.
  await session('POST', '/timeouts', { script: 600_000, pageLoad: 30_000 });
  const page = {
    goto: (url) => session('POST', '/url', { url }),
    /** Runs `fn(arg)` in the page and waits for its promise; `arg` and the result go through JSON. */
    async evaluate(fn, arg) {
      const script = `const done = arguments[arguments.length - 1];
        Promise.resolve(arguments[0]).then(${fn}).then((value) => done({ value }), (e) => done({ error: String(e?.stack ?? e) }));`;
      const outcome = await session('POST', '/execute/async', { script, args: [arg ?? null] });
      if (outcome.error !== undefined) throw new Error(`evaluate: ${outcome.error}`);
      return outcome.value;
    },
    /** Polls `fn(arg)` every 50 ms until it is truthy; rejects after `timeout` ms. */
    async waitForFunction(fn, arg, { timeout = 30_000 } = {}) {
      const deadline = Date.now() + timeout;
      for (;;) {
        const value = await page.evaluate(fn, arg);
        if (value) return value;
        if (Date.now() > deadline) throw new Error(`waitForFunction: still false after ${timeout} ms: ${fn}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    reload: () => session('POST', '/refresh'),
    goBack: () => session('POST', '/back'),
    /**
     * Closes the tab as a user closes one of several: unload events run and the browser lives on. A new
     * tab opens first, since closing the last window quits MiniBrowser, which may drop what the page sent
     * on its way out (a beacon still in the network process).
     */
    async close() {
      await session('POST', '/window/new', { type: 'tab' });
      await session('DELETE', '/window');
    },
  };
  return page;
}

async function command(driverUrl, method, path, body) {
  const response = await fetch(driverUrl + path, {
    method,
    headers: { 'content-type': 'application/json' },
    // Drivers want a JSON body on every POST, even an empty one.
    body: body === undefined ? (method === 'POST' ? '{}' : undefined) : JSON.stringify(body),
  });
  const { value } = await response.json();
  if (!response.ok) throw new Error(`WebDriver ${method} ${path}: ${value?.error}: ${value?.message}`);
  return value;
}
