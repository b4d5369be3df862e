// Section 1: main-thread cost per streamed chunk in headless Chromium and Firefox. The anchor's stream
// (20,000 OpenAI content events + usage + [DONE], seeded chunks of 1-300 bytes) through in-page
// ReadableStreams wrapped in a Response (no network: only CPU), read by the app's own path with and
// without the meter's fetch hook, plus the meter's manual API alone. Rounds interleave the variants, in
// rotating order; each browser runs the same rounds, Chromium first. The goal is judged on Chromium,
// the browser of the anchor figures.
import { openBenchPage, ENGINES } from './lib/browser.mjs';
import { median, medianInterval, min, max, fmt, pct, spread, table, progress } from './lib/stats.mjs';
import { summarizeProfile, profileMarkdown } from './lib/profile.mjs';
import { cpuWatch, waitForQuiet } from './lib/cpu.mjs';

const EVENTS = 20_000;
const WARM = 2;
// 61 rounds (about 1.5 s each in Chromium, 3 s in Firefox): the 95% interval of their median ratio runs
// from the 23rd to the 39th. With 25 its width, about 13 points, left a median ratio of 22% undecided.
const TIMED = 61;
const GOAL = 0.25;
/** Issue 17: the core, through the manual API, at most this per event. */
const CORE_GOAL_NS = 500;
const ANCHOR = { app: 5600, reader: 1779, direct: 2784, wrapperPerChunk: 1587 };
const VARIANTS = ['reader', 'app', 'hooked', 'hooked-reader', 'manual', 'wrap-default', 'wrap-bytes'];
// A run during which other processes took more than this share of the machine is run again, once they
// quiet down (waiting at most 15 s), for at most REPEAT_MS of each browser's rounds.
const NOISY = 0.15;
const REPEAT_MS = 150_000;

export const title = 'Main-thread cost per streamed chunk (headless Chromium and Firefox)';

export async function run(ctx) {
  const byEngine = {};
  for (const engine of Object.keys(ENGINES)) byEngine[engine] = await measure(ctx, engine);
  const engines = Object.values(byEngine);
  const { chromium: c, firefox: f } = byEngine;

  const coreRoom = c.allowed - median(c.hookOverhead);
  const limits = () => `Measured in this run in Chromium: of the ${fmt(median(c.added), 0)} ns the meter adds per event, the core's own work ` +
    `through the manual API (c) is ${fmt(median(c.ns.manual), 0)} ns and the hook's observation of each read ` +
    `${fmt(median(c.hookOverhead), 0)} ns, against the ${fmt(c.allowed, 0)} ns the goal allows in all. ` +
    (c.bodyWrapped
      ? 'In this build the hook hands the app a body stream of its own, so each chunk crosses two streams: '
      : "In this build the hook patches the app's reader in place (probed in the page: the app reads the response's own body), " +
        'so each chunk crosses one stream, as without the meter; a wrapper stream would cost more than the whole allowance by itself: ') +
    `a bare pull wrapper with no meter in it costs ${fmt(median(c.wrapDefault), 0)} ns per event as a default stream and ` +
    `${fmt(median(c.wrapBytes), 0)} ns as a byte stream. The hook's share, (b) − (a) − (c), is the promise reaction that hands each ` +
    "chunk to the core before the app's own continuation runs, and whatever the core loses by running between the app's steps " +
    'instead of in a tight loop as in (c). ' +
    (coreRoom > 0
      ? `With the hook as it is, the goal needs the core at ${fmt(coreRoom, 0)} ns per event, ` +
        `${pct(1 - coreRoom / median(c.ns.manual), 0)} less than now. `
      : 'The hook alone takes the whole allowance, so no core could meet the goal. ') +
    'The profile below shows where the hooked path spends its time in Chromium (no profile in Firefox: it needs the Chrome DevTools ' +
    'Protocol; the core by function: docs/core-speed.md has its native breakdown).';
  const rows = [
    ['(a) the app\'s own path: reader + TextDecoder(stream) + eventsource-parser + JSON.parse + content, meter off', 'app', ANCHOR.app],
    ['(b) the same through the meter\'s fetch hook (`wrapFetch` over a stub returning the in-page Response)', 'hooked', null],
    ['(c) the meter\'s manual API alone: `track()`, `chunk()` per chunk (no ReadableStream, `end()` excluded)', 'manual', null],
    ['reader doing nothing (the stream machinery alone)', 'reader', ANCHOR.reader],
    ['reader doing nothing, through the fetch hook', 'hooked-reader', null],
    ['reader doing nothing, through a hand-written pull wrapper (default stream, highWaterMark 0), no meter', 'wrap-default', ANCHOR.reader + ANCHOR.wrapperPerChunk * 23_511 / 20_002],
    ['reader doing nothing, through the same wrapper as a byte stream, no meter', 'wrap-bytes', null],
  ].map(([what, v, anchor]) => [what, ...engines.flatMap((e) => [spread(e.ns[v], 0), fmt(median(e.perChunk[v]), 0)]), anchor === null ? '' : fmt(anchor, 0)]);

  // A per-round series: its median in ns per event and, unless `share` is false, its median share of the same round's (a).
  const cells = (e, xs, share = true) => [fmt(median(xs), 0), share ? pct(median(xs.map((x, i) => x / e.ns.app[i]))) : ''];
  const derived = table(['derived (paired per round, median)', ...engines.flatMap((e) => [`${e.name} (${e.timedBy}): ns per event`, `${e.name}: of the app's own cost`])], [
    ['**added by the meter: (b) − (a)**', (e) => [`**${fmt(median(e.added), 0)}**`, `**${pct(e.ratio)}** (${e.range})`]],
    ['of which the core (wasm framing, decoding, timeline): (c)', (e) => cells(e, e.ns.manual)],
    ['of which the hook, observing each read: (b) − (a) − (c)', (e) => cells(e, e.hookOverhead)],
    ['hook + core without app parsing: (hooked reader) − (reader)', (e) => cells(e, e.hookedReaderAdded, false)],
    ['a hand-written pull wrapper, default stream, no meter: (wrap default) − (reader)', (e) => cells(e, e.wrapDefault)],
    ['the same wrapper as a byte stream (`type: \'bytes\'`), no meter: (wrap bytes) − (reader)', (e) => cells(e, e.wrapBytes)],
    ['goal: added cost under 25% of (a)', (e) => [fmt(e.allowed, 0), '25%']],
  ].map(([what, of]) => [what, ...engines.flatMap(of)]));

  const perEngine = (say) => engines.map((e) => `${e.name} ${say(e)}`).join(', ');
  const body = [
    `Stream: ${fmt(c.setup.events)} events (${fmt(EVENTS)} content + usage + \`[DONE]\`), ${fmt(c.setup.bytes)} bytes, ` +
    `in ${fmt(median(c.chunkCounts))} chunks (median over rounds; seeded chunkings of 1–300 bytes, a different seed each round, ` +
    `the same for every variant within a round and in both browsers). Anchor stream: 20,002 events, 3,549,302 bytes, 23,511 chunks. ` +
    `Each chunk owns its ArrayBuffer (as fetch's do) and is handed out by a pull source (\`new ReadableStream({ pull })\`, default ` +
    `highWaterMark); the app path reads \`new Response(stream, { headers: { 'content-type': 'text/event-stream' } }).body\`. ` +
    `Each browser runs the same rounds in a page of its own, Chromium's first, then Firefox's: ` +
    `${WARM} warm-up rounds, then ${TIMED} timed rounds; each round runs every variant once, in rotating order, after a full GC in ` +
    'Chromium (CDP `HeapProfiler.collectGarbage`; none in Firefox: forcing one needs the Chrome DevTools Protocol, so its collector ' +
    'runs when it decides, within the timed runs). Figures: median (min–max) over the timed rounds. In Chromium each run is timed ' +
    'as the main thread\'s CPU time (CDP `Performance.getMetrics`, `ThreadTime`, read before and after the run), the cost this ' +
    'section is about: time the thread spent descheduled, while other processes ran, counts for neither the app nor the meter. ' +
    `Read around the whole run, the hooked runs' CPU time also holds the stream's end and report (${fmt(c.endUs, 0)} µs a stream, ` +
    `${fmt((c.endUs * 1000) / c.setup.events, 0)} ns an event), which the wall clock leaves out; (c) leaves it out in both. ` +
    'Firefox has no such reading (it needs the Chrome DevTools Protocol), so its runs are timed with the page\'s `performance.now()`, ' +
    `whose step is ${f.clockMs} ms (measured in the page): at most one step per run, ±${fmt((f.clockMs * 1e6) / f.setup.events, 0)} ns per event. ` +
    'A per-stream fixed cost is not in the per-event figures: `end()` (closing the stream and building the report) takes ' +
    `${fmt(c.endUs, 0)} µs (median) in Chromium; in Firefox, a single interval this short on its ${f.clockMs} ms clock reads as whole ` +
    `steps (median reading: ${fmt(f.endUs, 0)} µs). ` +
    'Share of the machine\'s CPU used by other processes (not this bench or its browsers; from /proc) during the median timed run: ' +
    `${perEngine((e) => `${pct(median(e.others), 0)} (max ${pct(Math.max(...e.others), 0)})`)}; runs repeated because they took more than ` +
    `${pct(NOISY, 0)} (after waiting, at most 15 s, for them to quiet down; repeats stop ${REPEAT_MS / 1000} s into each browser's rounds): ` +
    `${perEngine((e) => fmt(e.redone))}. ` +
    'The anchor column quotes anchor-figures.md (measured in Chromium) for context only (its wrapper row: the reader figure plus its +1,587 ns per chunk). ' +
    `In this run, Chromium took ${fmt(median(c.ns.app) / ANCHOR.app, 1)}× the anchor's time on the app's path and ` +
    `${fmt(median(c.ns.reader) / ANCHOR.reader, 1)}× on the bare reader, so compare the ratios measured here, not the absolute ns with the anchor's.`,
    ...engines.filter((e) => median(e.others) > 0.1).flatMap((e) => ['', `**Noisy:** other processes still took ${pct(median(e.others), 0)} of the CPU ` +
      `in ${e.name}'s median counted run: its figures below are less reliable than usual (see the per-round ratios); run \`npm run bench\` again on a quieter machine.`]),
    '',
    table(['variant', ...engines.flatMap((e) => [`${e.name} (${e.timedBy}): ns per event, median (min–max)`, `${e.name}: ns per chunk`]), 'anchor ns per event (Chromium)'],
      rows, ['l', ...engines.flatMap(() => ['r', 'r']), 'r']),
    '',
    derived,
    '',
    `**Goal (added cost under 25% of the app's own parsing cost, judged on Chromium): ${c.verdict}` +
    `${c.verdict === 'not shown' ? ': the goal lies inside the 95% interval of the median ratio' : ''}** — the meter adds ` +
    `${fmt(median(c.added), 0)} ns per event (median of the per-round differences); the median per-round ratio to the app's ` +
    `own cost is ${pct(c.ratio)} (95% interval of the median ratio ${c.range}; per-round ratios: ${c.ratios.map((r) => pct(r, 0)).join(', ')}).`,
    '',
    `Chromium's wall clock (\`performance.now()\`, step ${c.clockMs} ms), the same runs, for comparison: the meter adds ` +
    `${fmt(median(c.wall.added), 0)} ns per event; the median per-round ratio to the app's own cost is ${pct(c.wall.ratio)} ` +
    `(95% interval ${c.wall.range}; the app's own path ${fmt(median(c.wall.ns.app), 0)} ns per event, ${fmt(min(c.wall.ns.app), 0)}–${fmt(max(c.wall.ns.app), 0)}).`,
    '',
    `Firefox, the same rounds, for comparison only (the goal is judged on Chromium, the browser of the anchor figures it was set ` +
    `against): the meter adds ${fmt(median(f.added), 0)} ns per event; the median per-round ratio to the app's own cost is ` +
    `${pct(f.ratio)} (95% interval ${f.range}; per-round ratios: ${f.ratios.map((r) => pct(r, 0)).join(', ')}).`,
    ...(c.profileText ? ['', '**What limits it.** ' + limits() + '\n\n' + c.profileText] : []),
    ...engines.filter((e) => e.problems.length).flatMap((e) => ['', `Page errors in ${e.name}: ${e.problems.join('; ')}`]),
  ].join('\n');
  return {
    body,
    goals: [{
      name: 'Main thread: added cost < 25% of the app\'s own path (95% interval below it)',
      value: `${pct(c.ratio)} (${c.range}), ${fmt(median(c.added), 0)} ns/event of main-thread CPU`,
      met: c.met,
      ...(c.verdict === 'not shown' ? { status: '**not shown**' } : {}),
    }, {
      name: `Core: at most ${CORE_GOAL_NS} ns per event (the manual API, (c), in Chromium's main-thread CPU)`,
      value: `${fmt(median(c.ns.manual), 0)} ns (${fmt(min(c.ns.manual), 0)}–${fmt(max(c.ns.manual), 0)})`,
      met: median(c.ns.manual) <= CORE_GOAL_NS,
    }],
    headline: { app: median(c.ns.app), hooked: median(c.ns.hooked), added: median(c.added), ratio: c.ratio, manual: median(c.ns.manual), bodyWrapped: c.bodyWrapped },
    profiled: !c.met,
  };
}

/** Every round in one browser's page, and their figures; in Chromium, a profile when the goal is not met. */
async function measure(ctx, engine) {
  const name = ENGINES[engine];
  const p = await openBenchPage(ctx, engine);
  try {
    const clockMs = await p.clockStepMs();
    const setup = await p.page.evaluate(([e, s]) => window.bench.mt.setup(e, s), [EVENTS, 1]);
    const bodyWrapped = await p.page.evaluate(() => window.bench.mt.bodyWrapped());
    const rounds = Object.fromEntries(VARIANTS.map((v) => [v, []]));
    const chunkCounts = [];
    let redone = 0;
    const others = [];
    const repeatUntil = performance.now() + REPEAT_MS;
    // One variant run after a fresh chunking and a full GC (Chromium only: it needs CDP); run again
    // (bounded) when other processes took more than NOISY of the machine meanwhile.
    const runOnce = async (variant, seed) => {
      for (;;) {
        const { chunks } = await p.page.evaluate((s) => window.bench.mt.prepare(s), seed);
        if (p.cdp) await p.gc();
        const stop = cpuWatch();
        const thread0 = p.cdp ? await p.threadMs() : null;
        const r = await p.page.evaluate((v) => window.bench.mt.run(v), variant);
        // `end()` is outside (c) in CPU time as in wall time: it runs on the main thread, so its wall time is CPU time.
        if (p.cdp) r.cpuMs = (await p.threadMs()) - thread0 - (r.endMs ?? 0);
        const cpu = stop();
        check(variant, r);
        if (cpu.others > NOISY && performance.now() < repeatUntil) {
          redone++;
          await waitForQuiet(15_000, 0.1);
          continue;
        }
        return { ...r, chunks, others: cpu.others };
      }
    };
    for (let round = 0; round < WARM + TIMED; round++) {
      const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]);
      const got = {};
      for (const variant of order) got[variant] = await runOnce(variant, round + 1);
      progress(`  main thread, ${name}: round ${round + 1}/${WARM + TIMED}${round < WARM ? ' (warm-up)' : ''}: ` +
        order.map((v) => `${v} ${fmt(((got[v].cpuMs ?? got[v].ms) * 1e6) / got[v].events, 0)}`).join(', ') +
        ` ns/event${p.cdp ? ' (main-thread CPU)' : ''} (runs repeated for noise so far: ${redone})`);
      if (round >= WARM) {
        for (const v of VARIANTS) rounds[v].push(got[v]);
        chunkCounts.push(got.app.chunks);
        others.push(...VARIANTS.map((v) => got[v].others).filter(Number.isFinite));
      }
    }
    // Chromium's figures are main-thread CPU time: a run whose thread other processes descheduled
    // would otherwise count their time as the meter's or the app's. Its wall-clock figures stay beside them.
    const figures = paired(rounds, p.cdp ? 'cpuMs' : 'ms');
    const wall = p.cdp ? paired(rounds, 'ms') : null;

    // The goal is judged on Chromium, and a profile needs CDP.
    let profileText = '';
    if (!figures.met && p.cdp) {
      progress(`  main thread, ${name}: goal ${figures.verdict}, profiling 3 hooked rounds`);
      await ctx.wasmNames();
      const profiles = [];
      for (let i = 0; i < 3; i++) {
        await p.page.evaluate((s) => window.bench.mt.prepare(s), 100 + i);
        await p.gc();
        const [, profile] = await p.profile(() => p.page.evaluate(() => window.bench.mt.run('hooked')), 50);
        profiles.push(profile);
      }
      const { names, why } = await ctx.wasmNames();
      const summary = summarizeProfile(profiles, { '/dist/index.js': ctx.sources.indexJs, '/vendor/eventsource-parser.js': ctx.sources.parserJs }, names);
      profileText = profileMarkdown(summary, 15, '3 hooked rounds (b) in Chromium, sampled every 50 µs', why);
    }
    return { ...figures, wall, timedBy: p.cdp ? 'main-thread CPU' : 'wall clock', name, clockMs, setup, bodyWrapped, chunkCounts, redone, others, profileText, problems: p.problems };
  } finally {
    await p.close();
  }
}

/** One browser's figures from its timed rounds, each run's time read from `key` (ms): per variant, and paired per round (same chunking). */
function paired(rounds, key) {
  const ns = Object.fromEntries(VARIANTS.map((v) => [v, rounds[v].map((r) => (r[key] * 1e6) / r.events)]));
  const perChunk = Object.fromEntries(VARIANTS.map((v) => [v, rounds[v].map((r) => (r[key] * 1e6) / r.chunks)]));
  // Each round's hooked run against the same round's app run.
  const added = ns.hooked.map((h, i) => h - ns.app[i]);
  const ratios = added.map((a, i) => a / ns.app[i]);
  const ratio = median(ratios);
  // Rounds scatter (a GC or a tier-up lands in one variant's run): the goal is met or missed only when
  // the 95% interval of the median ratio is on one side of it; otherwise this run cannot tell.
  const [ratioLow, ratioHigh] = medianInterval(ratios);
  const met = ratioHigh < GOAL;
  return {
    ns,
    perChunk,
    added,
    ratios,
    ratio,
    met,
    verdict: met ? 'met' : ratioLow >= GOAL ? 'missed' : 'not shown',
    range: `${pct(ratioLow)}–${pct(ratioHigh)}`,
    hookedReaderAdded: ns['hooked-reader'].map((h, i) => h - ns.reader[i]),
    hookOverhead: added.map((a, i) => a - ns.manual[i]),
    wrapDefault: ns['wrap-default'].map((w, i) => w - ns.reader[i]),
    wrapBytes: ns['wrap-bytes'].map((w, i) => w - ns.reader[i]),
    allowed: median(ns.app) * GOAL,
    endUs: median(rounds.manual.map((r) => r.endMs * 1000)),
  };
}

function check(variant, r) {
  if (!r.enabled || r.errors) throw new Error(`${variant}: the meter is disabled or counted errors (${r.errors})`);
  if ((variant === 'app' || variant === 'hooked') && r.result.events !== 20_002) throw new Error(`${variant}: the app parsed ${r.result.events} events`);
  if (variant.startsWith('hooked') && (r.report.status !== 'ok' || r.report.outputEvents !== 20_000 || r.report.format !== 'openai')) {
    throw new Error(`${variant}: unexpected report ${JSON.stringify(r.report)}`);
  }
  if (variant === 'manual' && r.result.outputEvents !== 20_000) throw new Error(`manual: ${r.result.outputEvents} output events`);
}
