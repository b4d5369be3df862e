// Section 2: stream throughput with and without the fetch hook: a 50 MB OpenAI SSE body from the
// scripted server over loopback (bytes mode: 16 KiB writes, each after the previous drained), read in
// the page with a reader that only counts bytes (the hardest case for the meter: the app does nothing).
import { openBenchPage } from './lib/browser.mjs';
import { median, fmt, pct, spread, table, progress } from './lib/stats.mjs';
import { summarizeProfile, profileMarkdown } from './lib/profile.mjs';
import { cpuWatch, waitForQuiet } from './lib/cpu.mjs';

const BYTES = 50_000_000;
const WARM = 2;
const TIMED = 15;
/** Profiled hooked reads: the core's rate is their median (one read's varied by a fifth between runs). */
const PROFILED = 3;
/** Issue 17: the core's wasm at least this fast on this section's stream. */
const CORE_GOAL_MBPS = 750;
const GOAL = 0.95;
const NOISY = 0.15;
const REDOS = 10;

export const title = 'Stream throughput, hooked vs unhooked (50 MB body over loopback)';

export async function run(ctx) {
  const p = await openBenchPage(ctx);
  const url = `${ctx.llm.url}/v1/chat/completions`;
  // text/plain keeps it a simple request (no CORS preflight); ttftMs 0: the body starts at once.
  const init = { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ model: 'bench', stream: true, schedule: { bytes: BYTES, ttftMs: 0 } }) };
  const read = (hooked) => p.page.evaluate(([u, i, h]) => window.bench.net.throughput(u, i, h), [url, init, hooked]);
  try {
    await p.page.evaluate((u) => fetch(u).then((r) => r.text()), `${ctx.llm.url}/health`);
    const runs = { plain: [], hooked: [] };
    const others = [];
    let redone = 0;
    for (let round = 0; round < WARM + TIMED; round++) {
      const order = round % 2 ? ['hooked', 'plain'] : ['plain', 'hooked'];
      const got = {};
      const stop = cpuWatch();
      for (const way of order) {
        await p.gc();
        const r = await read(way === 'hooked');
        if (r.bytes < BYTES * 0.99) throw new Error(`${way}: read ${r.bytes} bytes`);
        if (way === 'hooked' && (r.report?.status !== 'ok' || r.report.format !== 'openai' || !(r.report.outputEvents > 100_000))) throw new Error(`hooked: report ${JSON.stringify(r.report)}`);
        got[way] = r;
      }
      const cpu = stop();
      const noisy = cpu.others > NOISY && redone < REDOS;
      progress(`  throughput: round ${round + 1}/${WARM + TIMED}${round < WARM ? ' (warm-up)' : ''}: unhooked ${fmt(mbps(got.plain), 0)} MB/s, ` +
        `hooked ${fmt(mbps(got.hooked), 0)} MB/s; other processes ${pct(cpu.others, 0)}${noisy ? ': noisy, run again' : ''}`);
      if (noisy) {
        redone++;
        round--;
        await waitForQuiet(15_000, 0.1);
        continue;
      }
      if (round >= WARM) {
        for (const way of order) runs[way].push(got[way]);
        if (Number.isFinite(cpu.others)) others.push(cpu.others);
      }
    }
    const plain = runs.plain.map(mbps);
    const hooked = runs.hooked.map(mbps);
    const ratios = hooked.map((h, i) => h / plain[i]);
    const ratio = median(ratios);
    const met = ratio >= GOAL;
    // The core's own rate (issue 17's goal) from profiled hooked reads, whether or not the ratio is met.
    progress(`  throughput: profiling ${PROFILED} hooked reads for the core's rate`);
    const { names, why } = await ctx.wasmNames();
    const sources = { '/dist/index.js': ctx.sources.indexJs };
    const profiled = [];
    for (let i = 0; i < PROFILED; i++) {
      await p.gc();
      const [hookedRead, profile] = await p.profile(() => read(true), 100);
      const summary = summarizeProfile(profile, sources, names);
      const wasmMs = summary.categories.find((c) => c.name === 'meter: wasm')?.ms ?? 0;
      profiled.push({ read: hookedRead, summary, wasmMs, rate: hookedRead.bytes / 1e6 / (wasmMs / 1000) });
    }
    const rates = profiled.map((r) => r.rate);
    const coreRate = median(rates);
    const coreMet = coreRate >= CORE_GOAL_MBPS;
    // The read with the median rate stands for the three: its profile is the one shown.
    const { read: hookedRead, summary: h, wasmMs } = [...profiled].sort((x, y) => x.rate - y.rate)[Math.floor(PROFILED / 2)];
    const coreText = `The core's wasm in the profiled hooked reads: **${fmt(coreRate, 0)} MB/s** of SSE through framing, JSON decoding ` +
      `and the timeline (median of ${PROFILED} reads, ${fmt(Math.min(...rates), 0)}–${fmt(Math.max(...rates), 0)}), against a goal of ${CORE_GOAL_MBPS} MB/s: ` +
      `**${coreMet ? 'met' : 'missed'}**.`;
    let profileText = '';
    if (!met) {
      progress('  throughput: goal missed, profiling one unhooked read');
      await p.gc();
      const [plainRead, plainProfile] = await p.profile(() => read(false), 100);
      const u = summarizeProfile(plainProfile, sources, names);
      const jsMs = h.categories.find((c) => c.name.startsWith('meter: JS'))?.ms ?? 0;
      const plainMs = median(runs.plain.map((r) => r.bodyMs));
      const hookedMs = median(runs.hooked.map((r) => r.bodyMs));
      const allowedMs = plainMs * (1 / GOAL - 1);
      const neededRate = median(runs.plain.map((r) => r.bytes)) / 1e6 / (allowedMs / 1000);
      profileText = [
        `The page's main thread was busy ${fmt(u.busyMs, 0)} ms during a profiled unhooked read of ${fmt(plainRead.bodyMs, 0)} ms, ` +
        `and ${fmt(h.busyMs, 0)} ms during the median profiled hooked read, of ${fmt(hookedRead.bodyMs, 0)} ms. In it the core's wasm took ` +
        `${fmt(wasmMs, 0)} ms and the meter's JS ` +
        `${fmt(jsMs, 0)} ms. The app's next read starts only after the meter has taken the chunk (its reaction runs before the ` +
        "app's), so this work adds to the read's time instead of overlapping the network's: the timed hooked reads took " +
        `${fmt(hookedMs - plainMs, 0)} ms longer than the unhooked ones (medians). The goal allows the meter ${fmt(allowedMs, 1)} ms ` +
        `(${pct(1 / GOAL - 1, 1)} of the unhooked read) for these bytes: a core at ${fmt(neededRate / 1000, 1)} GB/s, ` +
        `${fmt(neededRate / coreRate, 0)}× its speed here, or the parsing moved off the main thread (to a worker), which this build does not do.`,
        '',
        profileMarkdown(h, 12, 'one hooked 50 MB read', why),
      ].join('\n');
    }
    const chunks = median(runs.plain.map((r) => r.chunks));
    const body = [
      `\`POST /v1/chat/completions\` with \`schedule: { bytes: ${BYTES}, ttftMs: 0 }\`: about ${fmt(BYTES / 1e6, 0)} MB of OpenAI ` +
      `content events (\`text/event-stream\`, so the default hook meters it), read in the page with \`response.body.getReader()\`, ` +
      'counting bytes and nothing else; hooked = the same fetch through `meter.wrapFetch(fetch)`. Time: from the response ' +
      `(headers) to the reader's \`done\`. ${WARM} warm-up rounds, then ${TIMED} timed rounds, each reading once each way in ` +
      `alternating order after a full GC; MB = 10^6 bytes. Median read: ${fmt(chunks)} chunks of about ` +
      `${fmt(median(runs.plain.map((r) => r.bytes / r.chunks)), 0)} B. Other processes used ${pct(median(others), 0)} of the ` +
      `machine's CPU in the median timed round (max ${pct(Math.max(...others), 0)}); ${redone} round${redone === 1 ? ' was' : 's were'} ` +
      `repeated because they took more than ${pct(NOISY, 0)} (after waiting, at most 15 s, for them to quiet down; at most ${REDOS} repeats).`,
      '',
      table(['', 'MB/s: median (min–max)', 'read time, ms (median)'], [
        ['unhooked', spread(plain, 0), fmt(median(runs.plain.map((r) => r.bodyMs)), 0)],
        ['hooked', spread(hooked, 0), fmt(median(runs.hooked.map((r) => r.bodyMs)), 0)],
        ['**ratio hooked / unhooked** (paired per round)', `**${fmt(ratio, 3)}** (${fmt(Math.min(...ratios), 3)}–${fmt(Math.max(...ratios), 3)})`, ''],
      ]),
      '',
      `**Goal (ratio at least ${GOAL}): ${met ? 'met' : 'missed'}** — ${fmt(ratio, 3)}.`,
      '',
      coreText,
      ...(profileText ? ['', '**What limits it.** ' + profileText] : []),
    ].join('\n');
    return {
      body,
      goals: [
        { name: 'Throughput: hooked / unhooked ≥ 0.95', value: fmt(ratio, 3), met },
        { name: `Core throughput: the core's wasm ≥ ${CORE_GOAL_MBPS} MB/s of SSE (profiled hooked reads)`, value: `${fmt(coreRate, 0)} MB/s`, met: coreMet },
      ],
      headline: { plain: median(plain), hooked: median(hooked), ratio },
    };
  } finally {
    await p.close();
  }
}

const mbps = (r) => r.bytes / 1e6 / (r.bodyMs / 1000);
