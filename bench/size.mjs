// Section 3: package size. What a page downloads from us (dist/index.js, the wasm core embedded in it,
// and dist/beacons/beacons.js when beacons are configured) next to what users already ship (web-vitals, and eventsource-parser bundled by esbuild
// --minify), all compressed the same way in this run: gzip -9 and brotli quality 11 (Node zlib).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';
import { fmt, table } from './lib/stats.mjs';
import { parseWasm, shortName } from './lib/wasm.mjs';

const GOAL_BROTLI = 21 * 1024;

export const title = 'Package size';

const sizes = (bytes) => ({
  raw: bytes.length,
  gzip: gzipSync(bytes, { level: 9 }).length,
  brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }).length,
});

export async function run(ctx) {
  const wasm = readFileSync(ctx.dist.wasm);
  const index = sizes(readFileSync(join(ctx.dist.dir, 'index.js')));
  const beacons = sizes(readFileSync(join(ctx.dist.dir, 'beacons/beacons.js')));
  const otlp = sizes(readFileSync(join(ctx.dist.dir, 'beacons/otlp.js')));
  const unitHash = sizes(readFileSync(join(ctx.dist.dir, 'beacons/experiment-unit.js')));
  // Files are compressed one by one, as a server sends them: the sum of each file's figures.
  const plus = (...all) => Object.fromEntries(['raw', 'gzip', 'brotli'].map((k) => [k, all.reduce((n, one) => n + one[k], 0)]));
  const total = plus(index, beacons);
  const core = sizes(wasm);
  const vitalsPath = join(ctx.root, 'node_modules/web-vitals/dist/web-vitals.js');
  const vitalsVersion = JSON.parse(readFileSync(join(ctx.root, 'node_modules/web-vitals/package.json'), 'utf8')).version;
  const vitals = sizes(readFileSync(vitalsPath));
  const vitalsAttr = sizes(readFileSync(join(ctx.root, 'node_modules/web-vitals/dist/web-vitals.attribution.js')));
  const parser = sizes(Buffer.from(ctx.parser.bytes));
  const row = (name, s, anchor = '') => [name, fmt(s.raw), fmt(s.gzip), fmt(s.brotli), anchor];
  const met = total.brotli <= GOAL_BROTLI;

  const lines = [
    'Bytes a page downloads, each file compressed on its own as a server sends it. Ours: `dist/index.js`, which every page ' +
    'loads (API, hooks and the wasm core embedded as a string; the core alone, as a `.wasm` file of its own, ' +
    'for scale), and the modules it imports only when configured: `dist/beacons/beacons.js` (beacon delivery, with an ' +
    '`endpoint`: the common use), `dist/beacons/otlp.js` (`format: \'otlp\'`) and `dist/beacons/experiment-unit.js` (`experimentUnit`). Theirs: measured in this run from `node_modules` (web-vitals\'s own minified `dist/` file; eventsource-parser\'s ' +
    '`createParser` bundled with esbuild `--minify --format=esm`).',
    '',
    table(['package / file', 'raw', 'gzip -9', 'brotli q11', 'anchor brotli'], [
      row('**llm-ux-meter, the common use: hooks and beacons (`index.js` + `beacons/beacons.js`)**', total).map((c, i) => (i === 0 || !c ? c : `**${c}**`)),
      row('llm-ux-meter `dist/index.js` alone (`onReport` only)', index),
      row('of which the wasm core, as a file of its own', core),
      row('llm-ux-meter `dist/beacons/beacons.js` (with an `endpoint`)', beacons),
      row('llm-ux-meter `dist/beacons/otlp.js` (with `format: \'otlp\'`)', otlp),
      row('llm-ux-meter with OTLP beacons (all three files)', plus(index, beacons, otlp)),
      row('llm-ux-meter `dist/beacons/experiment-unit.js` (with `experimentUnit`)', unitHash),
      row(`web-vitals ${vitalsVersion} \`dist/web-vitals.js\``, vitals, '3,034'),
      row(`web-vitals ${vitalsVersion} \`dist/web-vitals.attribution.js\``, vitalsAttr, '5,026'),
      row(`eventsource-parser ${ctx.parser.version} \`createParser\` (esbuild ${ctx.parser.esbuild} --minify)`, parser, '1,644'),
    ], ['l', 'r', 'r', 'r', 'r']),
    '',
    `Ratios (brotli, this run): the common use is ${fmt(total.brotli / vitals.brotli, 2)}× web-vitals and ` +
    `${fmt(total.brotli / parser.brotli, 2)}× eventsource-parser; the wasm core alone is ${fmt(core.brotli / vitals.brotli, 2)}× web-vitals.`,
    '',
    `**Goal (the common use, hooks and beacons, at most 21 KB = 21,504 B brotli): ${met ? 'met' : 'missed'}** — ${fmt(total.brotli)} B ` +
    `(${met ? `${fmt(GOAL_BROTLI - total.brotli)} B to spare` : `${fmt(total.brotli - GOAL_BROTLI)} B over`}).`,
  ];
  if (!met) lines.push('', '**What limits it.** ' + (await breakdown(ctx, wasm, core, index)));
  return {
    body: lines.join('\n'),
    goals: [{ name: 'Size: the common use (hooks and beacons) ≤ 21 KB brotli', value: `${fmt(total.brotli)} B (onReport only: ${fmt(index.brotli)} B)`, met }],
    headline: { total, index, wasm: core, vitals, parser },
  };
}

// ---------------------------------------------------------------------------------------------------
// Where the bytes are: the shipped module's sections and its largest functions, by name when the
// build's pre-optimisation module maps exactly onto the shipped one (see lib/wasm.mjs).

async function breakdown(ctx, wasm, core, index) {
  const shipped = parseWasm(wasm);
  const sectionRows = shipped.sections
    .sort((a, b) => b.size - a.size)
    .map((s) => [s.name, fmt(s.size), `${fmt((100 * s.size) / wasm.length, 1)}%`, fmt(sizes(wasm.subarray(s.start, s.end)).brotli)]);
  const out = [
    `The wasm core is ${fmt(wasm.length)} B raw (${fmt(core.brotli)} B brotli as a file of its own, of ${fmt(index.brotli)} B for \`dist/index.js\`); by section (brotli of each section alone, for scale):`,
    '',
    table(['section', 'bytes', 'share', 'brotli alone'], sectionRows),
  ];
  const code = shipped.functions.slice().sort((a, b) => b.size - a.size);
  const codeBytes = code.reduce((n, f) => n + f.size, 0);
  const { names, why } = await ctx.wasmNames();
  const label = (f) => names?.get(f.index) ?? shipped.exports.get(f.index) ?? `function ${f.index}`;
  out.push('', `The code section holds ${fmt(code.length)} functions (${fmt(codeBytes)} B of bodies); the largest` +
    (names ? ' (names from the same build re-optimised with names kept; its code section is byte-identical to the shipped one):' : ` (unnamed: ${why}):`), '',
  table(['function', 'bytes (shipped)', 'share of code'],
    code.slice(0, 15).map((f) => [`\`${shortName(label(f))}\``, fmt(f.size), `${fmt((100 * f.size) / codeBytes, 1)}%`]), ['l', 'r', 'r']));
  const data = shipped.sections.find((s) => s.name === 'data');
  if (data) out.push('', `The data section (${fmt(data.size)} B) holds the core's constant data (static strings and tables).`);
  out.push('', await jsBreakdown(ctx));
  return out.join('\n');
}

/**
 * The JS bundle by source module: esbuild's metafile for the build's staged sources (target/npm-stage,
 * bundled with scripts/build.sh's options), used only when that bundle is byte-identical to the shipped one.
 */
async function jsBreakdown(ctx) {
  const stage = join(ctx.root, 'target/npm-stage/dist/index.js');
  if (!existsSync(stage)) return 'The JS bundle by module: not available (no staged sources in target/npm-stage).';
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [stage], bundle: true, minify: true, format: 'esm', target: 'es2020', platform: 'neutral',
    charset: 'ascii', write: false, metafile: true, logLevel: 'silent', external: ['./beacons/beacons.js', './beacons/otlp.js', './beacons/experiment-unit.js'],
  });
  const shipped = readFileSync(join(ctx.dist.dir, 'index.js'));
  if (Buffer.compare(Buffer.from(result.outputFiles[0].contents), shipped) !== 0) {
    return 'The JS bundle by module: not available (the staged sources in target/npm-stage do not rebuild the shipped `dist/index.js`).';
  }
  const inputs = Object.entries(Object.values(result.metafile.outputs)[0].inputs).map(([path, v]) => [path.replace(/^.*npm-stage\/dist\//, ''), v.bytesInOutput]);
  const groups = new Map();
  for (const [path, bytes] of inputs) {
    const group = path === 'wasm/module.js' ? 'wasm/module.js (the embedded wasm core)' : path;
    groups.set(group, (groups.get(group) ?? 0) + bytes);
  }
  const rows = [...groups].sort((a, b) => b[1] - a[1]);
  const sum = rows.reduce((n, [, b]) => n + b, 0);
  return `\`dist/index.js\` (${fmt(shipped.length)} B minified) by source module, from esbuild's metafile for the build's staged sources ` +
    '(rebundled with `scripts/build.sh`\'s options: byte-identical to the shipped file); minified bytes, before compression:\n\n' +
    table(['module', 'minified bytes', 'share'], rows.map(([m, b]) => [`\`${m}\``, fmt(b), `${fmt((100 * b) / sum, 1)}%`]));
}
