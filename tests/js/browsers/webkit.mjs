// WebKit, Safari's engine: Debian's WebKitGTK MiniBrowser driven by its WebKitWebDriver (classic
// WebDriver; Playwright's WebKit needs its own patched build). MiniBrowser has no headless mode on
// Debian 12, so it draws on a private Xvfb display. The driver holds one session at a time, so each
// page is a driver and a MiniBrowser of its own: a fresh profile, as Playwright's `newPage()` gives.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { newSession } from './webdriver.mjs';
import { CLOSED_TAB_GRACE_MS } from './closed-tab.mjs';

const MINIBROWSER = process.env.MINIBROWSER_PATH ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';

export async function launchWebKit() {
  const xvfb = await startXvfb();
  const drivers = new Set();
  return {
    async newPage() {
      const driver = await startDriver(xvfb.display);
      drivers.add(driver);
      try {
        const page = await newSession(driver.url, { 'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] } });
        return {
          ...page,
          async close() {
            await page.close().catch(() => {});
            // The browser outlives the tab for a moment, as a user's does, so requests the page sent
            // on its way out can leave; the launcher's close() stops it sooner if it comes first.
            driver.stopTimer = setTimeout(() => {
              drivers.delete(driver);
              driver.stop();
            }, CLOSED_TAB_GRACE_MS);
          },
        };
      } catch (error) {
        drivers.delete(driver);
        driver.stop();
        throw error;
      }
    },
    async close() {
      for (const driver of drivers) {
        clearTimeout(driver.stopTimer);
        driver.stop();
      }
      xvfb.stop();
    },
  };
}

/** Xvfb on the first free display (it reports the number it took on fd 3). */
async function startXvfb() {
  const child = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  const display = await new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => { err += d; });
    child.stdio[3].on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(`:${out.trim()}`);
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`Xvfb exited (${code}): ${err.slice(-500)}`)));
  });
  return { display, stop: () => child.kill() };
}

/** WebKitWebDriver on a free port, in a process group of its own so its MiniBrowser stops with it. */
async function startDriver(display) {
  const port = await freePort();
  const child = spawn('WebKitWebDriver', [`--port=${port}`, '--host=127.0.0.1'], {
    env: { ...process.env, DISPLAY: display },
    stdio: 'ignore',
    detached: true,
  });
  const stop = () => {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  };
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/status`)).ok) return { url, stop };
    } catch {}
    if (i === 100 || child.exitCode !== null) {
      stop();
      throw new Error(`WebKitWebDriver did not answer on ${url}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}
