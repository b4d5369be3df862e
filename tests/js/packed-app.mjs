// Test apps that use the package as users get it: `npm pack` of dist/, installed with npm into an app of
// its own under target/js-apps/<name> (its own package.json, so nothing resolves to this repository's
// sources). An app's pinned dependencies are installed with `npm ci` only when its package.json or lock
// changed; the tarball is installed again on every call.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const APPS = join(ROOT, 'target/js-apps');
const npm = (args, cwd) => execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });

/** Packs dist/ as `npm pack` does for a release; returns the tarball's path. */
export function packTarball() {
  mkdirSync(APPS, { recursive: true });
  const [{ filename }] = JSON.parse(npm(['pack', '--json', '--pack-destination', APPS], ROOT));
  return join(APPS, filename);
}

/**
 * Lays out tests/js/apps/<name> (plus `extra` files: { targetName: sourcePath }) in target/js-apps/<name>,
 * installs its locked dependencies when they changed and then `tarball`. Returns the app's directory.
 * Sources are copied afresh each time; node_modules and the install stamp are kept.
 */
export function installApp(name, tarball, extra = {}) {
  const source = join(ROOT, 'tests/js/apps', name);
  const dir = join(APPS, name);
  mkdirSync(dir, { recursive: true });
  cpSync(source, dir, { recursive: true });
  for (const [to, from] of Object.entries(extra)) cpSync(from, join(dir, to));
  const stamp = join(dir, 'node_modules/.installed-from');
  const want = createHash('sha256').update(readFileSync(join(dir, 'package.json'))).update(readFileSync(join(dir, 'package-lock.json'))).digest('hex');
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== want) {
    rmSync(join(dir, 'node_modules'), { recursive: true, force: true });
    npm(['ci'], dir);
    writeFileSync(stamp, want);
  }
  npm(['install', '--no-save', tarball], dir);
  return dir;
}
