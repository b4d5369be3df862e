// npm run bench: runs every section in order (progress on stderr) and writes BENCHMARKS.md from this
// run's figures only. Loopback only; each section is bounded by a timeout.
//   node bench/run.mjs                      all sections, writes BENCHMARKS.md
//   node bench/run.mjs --only main-thread   one section (or a comma list), prints it, writes nothing
import { writeFileSync, renameSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, ensureBuilt, snapshotDist, machine, bundleEventsourceParser, load } from './lib/env.mjs';
import { serveBench } from './lib/server.mjs';
import { launchChromium } from './lib/browser.mjs';
import { launchFirefox } from './lib/firefox.mjs';
import { fmt, pct, table, withTimeout, progress } from './lib/stats.mjs';
import { cpuWatch, waitForQuiet } from './lib/cpu.mjs';
import { shippedNames } from './lib/wasm.mjs';
import { startScriptedServer } from '../scripts/scripted-llm-server.mjs';
import * as mainThread from './main-thread.mjs';
import * as throughput from './throughput.mjs';
import * as size from './size.mjs';
import * as startup from './startup.mjs';
import * as memory from './memory.mjs';
import * as accuracy from './accuracy.mjs';
import * as tokenEstimate from './token-estimate.mjs';
import * as collector from './collector.mjs';

// [id, module, timeout ms, timed: wait (at most 20 s) for other processes to quiet down first]
const SECTIONS = [
  ['main-thread', mainThread, 600_000, true],
  ['throughput', throughput, 240_000, true],
  ['size', size, 60_000, false],
  ['startup', startup, 300_000, true],
  ['memory', memory, 240_000, false],
  ['accuracy', accuracy, 720_000, true],
  ['token-estimate', tokenEstimate, 120_000, false],
  ['collector', collector, 4_500_000, false],
];

const { values: args } = parseArgs({ options: { only: { type: 'string' } } });
const only = args.only ? new Set(args.only.split(',')) : null;
const started = new Date();
const t0 = performance.now();

progress(`llm-ux-meter bench: ${only ? [...only].join(', ') : 'all sections'}`);
const built = await ensureBuilt(progress);
const dist = snapshotDist();
progress(`dist/ snapshot: ${dist.files.map((f) => `${f.path} ${f.bytes} B`).join(', ')}`);
const host = machine();
const parser = await bundleEventsourceParser();
const site = await serveBench(
  { '/dist/': dist.dir, '/bench/': join(ROOT, 'bench') },
  { '/vendor/eventsource-parser.js': parser.code },
);
const llm = await startScriptedServer({ port: 0 });
const [browser, firefox] = await Promise.all([launchChromium(), launchFirefox()]);
const versions = { chromium: browser.version(), firefox: firefox.version() };
progress(`Chromium ${versions.chromium}, Firefox ${versions.firefox}, Node ${process.version}, ${host.cores} cores, load ${load()}`);
const ctx = {
  root: ROOT, browser, firefox, site, llm, dist, parser, host,
  sources: { indexJs: readFileSync(join(dist.dir, 'index.js'), 'utf8'), parserJs: parser.code },
};
// Wasm function names for profiles and the size breakdown: computed once, when first needed (not
// during timed runs: it takes about 10 s of CPU).
let names = null;
ctx.wasmNames = () => (names ??= shippedNames(ROOT, dist.wasm));

const results = [];
try {
  for (const [id, section, timeoutMs, timed] of SECTIONS) {
    if (only && !only.has(id)) continue;
    const quiet = timed ? await waitForQuiet(20_000, 0.1) : null;
    if (quiet && !quiet.quiet) progress(`  other processes still use ${pct(quiet.others, 0)} of the CPU after 20 s: starting anyway`);
    const loadBefore = load();
    progress(`section ${results.length + 1}: ${section.title} (load ${loadBefore})`);
    const s0 = performance.now();
    const cpu = cpuWatch();
    let result;
    try {
      result = await withTimeout(section.run(ctx), timeoutMs, id);
    } catch (error) {
      progress(`  ${id} FAILED: ${error.stack ?? error}`);
      result = { body: `**Not measured in this run: the section failed:** \`${String(error.message ?? error).replace(/`/g, "'")}\``, goals: [], failed: true };
    }
    const seconds = (performance.now() - s0) / 1000;
    results.push({ id, title: section.title, ...result, seconds, loadBefore, cpu: cpu(), quiet });
    progress(`  ${id}: ${seconds.toFixed(1)} s; ${(result.goals ?? []).map((g) => `${g.name}: ${g.value} (${status(g).replace(/\*/g, '')})`).join('; ') || 'done'}`);
  }
} finally {
  await browser.close().catch(() => {});
  await firefox.close().catch(() => {});
  await llm.close().catch(() => {});
  await site.close().catch(() => {});
}
const loadAtEnd = load();
const totalSeconds = (performance.now() - t0) / 1000;
const markdown = render({ results, host, versions, started, totalSeconds, loadAtEnd, dist, parser, built });
dist.cleanup();

if (only) {
  process.stdout.write(markdown);
  progress(`--only: BENCHMARKS.md not written (${totalSeconds.toFixed(0)} s)`);
} else {
  const file = join(ROOT, 'BENCHMARKS.md');
  writeFileSync(`${file}.tmp`, markdown);
  renameSync(`${file}.tmp`, file);
  progress(`wrote BENCHMARKS.md (${totalSeconds.toFixed(0)} s in all)`);
}
if (results.some((r) => r.failed)) process.exitCode = 1;

/** A goal's status cell: its own (markdown) when it has one, else met or missed. */
function status(goal) {
  return goal.status ?? (goal.met ? 'met' : '**missed**');
}

function render({ results, host, versions, started, totalSeconds, loadAtEnd, dist, parser, built }) {
  const goals = results.flatMap((r) => (r.goals ?? []).map((g) => [g.name, g.value, status(g), `§${results.indexOf(r) + 1}`]));
  const gib = (b) => `${(b / 2 ** 30).toFixed(1)} GiB`;
  const loads = results.map((r) => `${r.id} ${r.loadBefore}`).join('; ');
  const shares = results.map((r) => `${r.id} ${Number.isFinite(r.cpu.others) ? pct(r.cpu.others, 0) : 'n/a (too short)'}`).join(', ');
  const busy = results.some((r) => r.cpu.others > 0.1);
  return [
    '# Benchmarks',
    '',
    `Generated by \`npm run bench\` (that is, \`node bench/run.mjs\`) on ${started.toISOString().replace('T', ' ').slice(0, 16)} UTC, ` +
    `in ${fmt(totalSeconds, 0)} s. Every figure in this file comes from that one run, and every comparison with another ` +
    'library was measured in the same run, the same way (the yardstick: `/work/shared/docs/anchor-figures.md`, whose own ' +
    'figures are quoted only as "anchor" columns for context). Traffic stays on 127.0.0.1: a static server for the bench page ' +
    'and the scripted LLM server (`scripts/scripted-llm-server.mjs`). Do not edit this file: run `npm run bench` again.',
    '',
    '## Machine and build',
    '',
    table(['', ''], [
      ['CPU', `${host.cores} cores, ${host.cpuModel}`],
      ['memory', gib(host.memoryBytes)],
      ['OS kernel', host.kernel],
      ['Node', host.node],
      ['Chromium', `${versions.chromium} (Debian \`/usr/bin/chromium\`, headless, driven by playwright-core)`],
      ['Firefox', `${versions.firefox} (Debian \`/usr/bin/firefox-esr\`, headless, driven by puppeteer-core over WebDriver BiDi; used by the main-thread and accuracy sections)`],
      ['load average (1 / 5 / 15 min)', `before each section: ${loads}; at the end: ${loadAtEnd}`],
      ['CPU used by other processes', `share of the whole machine taken by processes other than this bench and its browsers, per section (from /proc): ${shares}`],
      ['commit', `${host.commit ?? 'unknown'}${host.dirtyFiles ? ` with ${host.dirtyFiles} uncommitted changes in the tree` : ''}`],
      ['package measured', `a snapshot of \`dist/\` taken at the start${built ? ' (built by this run)' : ''}: ` +
        dist.files.map((f) => `\`${f.path}\` ${fmt(f.bytes)} B, sha256 ${f.sha256.slice(0, 12)}…, built ${f.mtime.toISOString().slice(0, 16).replace('T', ' ')}`).join('; ')],
      ['yardsticks', `eventsource-parser ${parser.version} (bundled by esbuild ${parser.esbuild}, \`--minify\`), web-vitals 6.2.3`],
    ], ['l', 'l']),
    '',
    busy
      ? '**Noise:** other processes (not this bench) used a noticeable share of the CPU during this run (see "CPU used by ' +
        'other processes" above; the machine has 2 cores shared with the browser, its network process and the Node servers). ' +
        'Timed sections started once others used under 10% for a second (waiting at most 20 s), and timed runs during which ' +
        'others took more than 15% were repeated (bounded; each section says how many), but ' +
        'timings are noisier than on an idle machine: the min–max ranges show how much.'
      : 'Other processes stayed quiet during this run (timed sections also waited, at most 20 s, for them to use under 10% ' +
        'of the CPU before starting); the min–max ranges show the remaining noise (2 cores are shared by ' +
        'the browser, its network process and the Node servers).',
    '',
    `Section run times: ${results.map((r) => `${r.id} ${fmt(r.seconds, 0)} s`).join(', ')}.`,
    '',
    '## Goals at a glance',
    '',
    table(['goal', 'this run', 'status', 'where'], goals, ['l', 'r', 'l', 'l']),
    '',
    ...results.flatMap((r, i) => [`## ${i + 1}. ${r.title}`, '', r.body, '']),
  ].join('\n');
}
