// Summarises a V8 CPU profile (CDP Profiler) as self time per function and per category, with a
// snippet of the source at each function for minified bundles (whose names say little).
import { fmt, table } from './stats.mjs';
import { shortName } from './wasm.mjs';

/** Categories by call frame, first match wins. */
const CATEGORIES = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['GC', (f) => f.functionName === '(garbage collector)'],
  ['browser native (program)', (f) => f.functionName === '(program)' || f.functionName === '(root)'],
  ['meter: wasm', (f) => f.url.startsWith('wasm://') || f.url.endsWith('.wasm')],
  ['meter: JS (dist/index.js)', (f) => f.url.endsWith('/dist/index.js')],
  ['app: eventsource-parser', (f) => f.url.includes('/vendor/')],
  ['bench page (app loop, stream source)', (f) => f.url.includes('/bench/')],
  ['V8/Blink builtins (streams, promises, JSON, TextDecoder)', () => true],
];

const categoryOf = (frame) => CATEGORIES.find(([, test]) => test(frame))[0];

/**
 * `profiles`: one CPU profile or a list (merged). `sources`: { urlSuffix: text } for snippets. Returns { totalMs, busyMs, categories: [{name, ms, share}],
 * functions: [{name, where, category, ms, share}] } sorted by self time.
 */
export function summarizeProfile(profiles, sources = {}, wasmNames = null) {
  const byFunction = new Map();
  for (const profile of [profiles].flat()) {
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const selfUs = new Map();
    let t = profile.startTime;
    const stamps = profile.timeDeltas.map((d) => (t += d));
    for (let i = 0; i < profile.samples.length; i++) {
      const dt = (i + 1 < stamps.length ? stamps[i + 1] : profile.endTime) - stamps[i];
      selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + Math.max(0, dt));
    }
    for (const [id, us] of selfUs) {
      const f = nodes.get(id).callFrame;
      const key = `${f.functionName}|${f.url}|${f.lineNumber}|${f.columnNumber}`;
      const entry = byFunction.get(key) ?? { frame: f, us: 0 };
      entry.us += us;
      byFunction.set(key, entry);
    }
  }
  const all = [...byFunction.values()];
  const totalUs = all.reduce((n, e) => n + e.us, 0);
  const busyUs = all.filter((e) => categoryOf(e.frame) !== 'idle').reduce((n, e) => n + e.us, 0);
  const categories = new Map();
  for (const e of all) {
    const c = categoryOf(e.frame);
    if (c !== 'idle') categories.set(c, (categories.get(c) ?? 0) + e.us);
  }
  const functions = all
    .filter((e) => categoryOf(e.frame) !== 'idle')
    .sort((a, b) => b.us - a.us)
    .map((e) => ({
      name: wasmName(e.frame, wasmNames) ?? (e.frame.functionName || '(anonymous)'),
      where: where(e.frame, sources),
      category: categoryOf(e.frame),
      ms: e.us / 1000,
      share: e.us / busyUs,
    }));
  return {
    totalMs: totalUs / 1000,
    busyMs: busyUs / 1000,
    categories: [...categories].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ name, ms: us / 1000, share: us / busyUs })),
    functions,
  };
}

/** The Rust name of a wasm frame (V8 calls it wasm-function[index]), when names are known. */
function wasmName(frame, names) {
  const index = /^(?:wasm-function|\$func)\[?(\d+)\]?$/.exec(frame.functionName)?.[1];
  if (!names || index === undefined) return null;
  const name = names.get(Number(index));
  return name ? `${shortName(name)} (wasm-function[${index}])` : null;
}

function where(frame, sources) {
  if (!frame.url) return '';
  const file = frame.url.replace(/^https?:\/\/[^/]+/, '');
  const source = Object.entries(sources).find(([suffix]) => frame.url.endsWith(suffix))?.[1];
  if (frame.url.startsWith('wasm://') || frame.url.endsWith('.wasm')) return `${file} (code offset ${frame.columnNumber})`;
  let at = `${file}:${frame.lineNumber + 1}:${frame.columnNumber + 1}`;
  if (source && frame.lineNumber >= 0) {
    const lines = source.split('\n');
    const text = (lines[frame.lineNumber] ?? '').slice(frame.columnNumber, frame.columnNumber + 70);
    at += ` \`${text.replace(/`/g, "'").replace(/\|/g, '\\|')}…\``;
  }
  return at;
}

/** Markdown: the category split and the top `n` functions by self time. */
export function profileMarkdown(summary, n = 12, label = 'the profiled run', wasmNamesWhy = null) {
  const cats = table(['category', 'self ms', 'share'],
    summary.categories.map((c) => [c.name, fmt(c.ms, 1), `${fmt(c.share * 100, 1)}%`]));
  const top = table(['function', 'category', 'where (minified bundles: the code at that point)', 'self ms', 'share'],
    summary.functions.slice(0, n).map((f) => [`\`${f.name.replace(/(?<!\\)\|/g, '\\|')}\``, f.category, f.where, fmt(f.ms, 1), `${fmt(f.share * 100, 1)}%`]),
    ['l', 'l', 'l', 'r', 'r']);
  const unnamed = wasmNamesWhy ? ` Wasm functions appear by index only: no names (${wasmNamesWhy}).` : '';
  return `CPU profile of ${label} (V8 sampling profiler via CDP \`Profiler\`; ${fmt(summary.busyMs, 0)} ms busy):\n\n${cats}\n\nTop ${n} functions by self time:${unnamed}\n\n${top}`;
}
