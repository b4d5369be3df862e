// Reading the shipped wasm module: sections, function body sizes, and function names. The shipped
// module has no names; when the build's pre-optimisation module is at hand (target/npm-stage, written
// by scripts/build.sh), it is optimised again with the build's own wasm-opt flags but keeping names
// (-g instead of --strip-debug), and the names are used only if the code section comes out
// byte-identical to the shipped one (so every function index maps to the same function).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SECTION_NAMES = ['custom', 'type', 'import', 'function', 'table', 'memory', 'global', 'export', 'start', 'element', 'code', 'data', 'datacount'];

/** { sections: [{ name, size, start, end }], functions: [{ index, size }], names: Map(index → name), exports: Map(index → name), code } */
export function parseWasm(buf) {
  let at = 8;
  const leb = () => {
    let result = 0;
    let shift = 0;
    for (;;) {
      const byte = buf[at++];
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if (byte < 0x80) return result;
    }
  };
  const str = () => {
    const n = leb();
    const s = buf.subarray(at, at + n).toString();
    at += n;
    return s;
  };
  const sections = [];
  const functions = [];
  const names = new Map();
  const exports = new Map();
  let imported = 0;
  let code = null;
  while (at < buf.length) {
    const start = at;
    const id = buf[at++];
    const size = leb();
    const end = at + size;
    let name = SECTION_NAMES[id] ?? `id ${id}`;
    if (id === 0) {
      const custom = str();
      name = `custom "${custom}"`;
      if (custom === 'name') {
        while (at < end) {
          const kind = buf[at++];
          const length = leb();
          const next = at + length;
          if (kind === 1) {
            const count = leb();
            for (let i = 0; i < count; i++) {
              const index = leb();
              names.set(index, str());
            }
          }
          at = next;
        }
      }
    } else if (id === 2) {
      const count = leb();
      for (let i = 0; i < count; i++) {
        str();
        str();
        const kind = buf[at++];
        if (kind === 0) {
          leb();
          imported++;
        } else if (kind === 1) {
          at++;
          if (leb() & 1) leb();
          leb();
        } else if (kind === 2) {
          const flags = leb();
          leb();
          if (flags & 1) leb();
        } else if (kind === 3) at += 2;
        else if (kind === 4) {
          at++;
          leb();
        }
      }
    } else if (id === 7) {
      const count = leb();
      for (let i = 0; i < count; i++) {
        const n = str();
        const kind = buf[at++];
        const index = leb();
        if (kind === 0) exports.set(index, n);
      }
    } else if (id === 10) {
      code = buf.subarray(at, end);
      const count = leb();
      for (let i = 0; i < count; i++) {
        const s = leb();
        functions.push({ index: imported + i, size: s });
        at += s;
      }
    }
    sections.push({ name, size: end - start, start, end });
    at = end;
  }
  return { sections, functions, names, exports, code };
}

/**
 * Function names for the shipped module `shippedPath` (Map index → name), or null with the reason.
 * Runs wasm-opt (binaryen, a devDependency) once: about 10 s of CPU.
 */
export async function shippedNames(root, shippedPath) {
  const pre = join(root, 'target/npm-stage/dist/wasm/llm_ux_meter.pre-opt.wasm');
  const wasmOpt = join(root, 'node_modules/.bin/wasm-opt');
  if (!existsSync(pre) || !existsSync(wasmOpt)) return { names: null, why: 'no pre-optimisation module in target/npm-stage' };
  const dir = mkdtempSync(join(tmpdir(), 'llm-ux-meter-names-'));
  try {
    const out = join(dir, 'named.wasm');
    await new Promise((resolve, reject) => execFile(wasmOpt, ['-Oz', '--converge', '--low-memory-unused', '-g', '--strip-producers', pre, '-o', out], { timeout: 90_000 }, (e) => (e ? reject(e) : resolve())));
    const named = parseWasm(readFileSync(out));
    const shipped = parseWasm(readFileSync(shippedPath));
    if (!named.code || !shipped.code || Buffer.compare(named.code, shipped.code) !== 0) return { names: null, why: 'the pre-optimisation module in target/npm-stage does not match the measured dist/ snapshot: rebuilt since the run began?' };
    return { names: named.names, why: null };
  } catch (error) {
    return { names: null, why: `wasm-opt failed: ${error.message}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A Rust symbol made short enough for a table: hash suffix and crate disambiguators dropped. */
export function shortName(name) {
  const clean = name.replace(/::h[0-9a-f]{16}$/, '').replace(/\[[0-9a-f]{16}\]/g, '').replace(/\|/g, '\\|');
  return clean.length > 90 ? `${clean.slice(0, 87)}…` : clean;
}
