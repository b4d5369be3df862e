// The analytics dashboard, served by the real collector at `/`, in headless Chromium over a few
// hundred stored records: names from beacons render as text (hostile ones included), "What users
// feel" comes first and lists exactly /api/diagnosis's findings (a finding's button filters the page
// to its value; a window where nothing stands out says so), the headline tiles agree with
// /api/summary, the A/B panel shows /api/compare's judgement over sessions (its status, sessions and
// streams per arm, the always-valid interval, the power line, the secondary figures, the verdict, a
// sample ratio mismatch when the split expected is not the one seen) over an experiment with its own
// start that each look extends, the slowest-streams table lists /api/streams' worst streams and
// draws the picked one's cadence, the stop rates (by TTFT and TPOT band, per group, per A/B arm) and
// the TPOT by answer length are the API's, the charts draw, and the empty and error states show.
// Writes screenshots to target/dashboard.png (the page), target/dashboard-ab.png and
// target/dashboard-ab-srm.png (the A/B panel).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, startCollector } from '../../scripts/collector.mjs';
import { launchChromium } from './browsers/chromium.mjs';
import { prng } from './lib/prng.mjs';
// The page's own formatting: a figure shown is compared with the API's, formatted as the page does.
import { count, dateTimeInput, ms, percent, points, pValue, signed, tick } from '../../www/dashboard/js/format.js';

// Beacon strings are anyone's to choose: these would run script if the page ever parsed them as HTML.
const HOSTILE_MODEL = '<img src=x onerror=alert(1)>';
const HOSTILE_SCENARIO = '</script><script>window.__pwned=1</script>';
const MODELS = ['gpt-4.1-mini', HOSTILE_MODEL];
const SCENARIOS = ['chat', HOSTILE_SCENARIO];
const RECORDS = 320;
// A session's streams share its envelope's sessionId and its variant: the A/B panel counts sessions.
const STREAMS_PER_SESSION = 4;
const SESSIONS_PER_ARM = RECORDS / STREAMS_PER_SESSION / 2;

const now = Date.now();
// An absolute window in the hash: the page queries exactly what the test queries.
const from = now - 3_600_000;
const to = now + 60_000;
const SLO = 'slo.ttftMs=1000&slo.tpotMs=50';

let collector, browser, dir;

before(async () => {
  assert.ok(existsSync(join(ROOT, 'www/dashboard/vendor/uPlot.esm.js')), 'www/dashboard/vendor/ is missing: npm run build copies uPlot there');
  dir = mkdtempSync(join(tmpdir(), 'dashboard-test-'));
  collector = await startCollector({ db: join(dir, 'beacons.db') });
  for (let i = 0; i < RECORDS; i += 100) {
    const chunk = records(i, Math.min(i + 100, RECORDS));
    for (let k = 0; k < chunk.length; k += STREAMS_PER_SESSION) {
      const session = (i + k) / STREAMS_PER_SESSION;
      const response = await fetch(`${collector.url}/v1/beacons`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain;charset=UTF-8' },
        body: JSON.stringify(envelope(chunk.slice(k, k + STREAMS_PER_SESSION), `b-${session}`, `s-${session}`)),
      });
      assert.equal(response.status, 200, await response.text());
    }
  }
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await collector?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('hostile names render literally, the findings are /api/diagnosis\'s, tiles match /api/summary, the A/B verdict is /api/compare\'s, charts draw', async () => {
  const { page, dialogs, pageErrors } = await open(`#from=${from}&to=${to}`);

  // What users feel, above every other panel: the findings of /api/diagnosis, in its order and words.
  const diagnosis = (await api(`/api/diagnosis?from=${from}&to=${to}`)).findings;
  assert.ok(diagnosis.some((f) => f.kind === 'stream' && f.evidence.value === 'B'), `variant B's slow streams are found: ${JSON.stringify(diagnosis)}`);
  assert.ok(diagnosis.some((f) => f.kind === 'start' && f.evidence.value === HOSTILE_MODEL), `the slow model is found: ${JSON.stringify(diagnosis)}`);
  const findings = await shownFindings(page);
  assert.equal(findings.length, diagnosis.length, 'one item per finding');
  findings.forEach((shown, i) => {
    const { severity, text, evidence } = diagnosis[i];
    assert.equal(shown.text, text, `finding ${i}: the API's sentence, as text`);
    assert.equal(shown.severity, severity, `finding ${i}: its severity in words`);
    assert.ok(shown.evidence.startsWith(`${count(evidence.streams)} streams vs ${count(evidence.otherStreams)} other streams; p ${pValue(evidence.pValue)} (${evidence.test})`), `finding ${i}: ${shown.evidence}`);
  });
  assert.equal(diagnosis[0].kind, 'stream');
  assert.equal(findings[0].kind, 'Slow or uneven streaming', 'the first finding\'s kind in words');
  assert.equal(findings.find((f) => f.text.includes(HOSTILE_MODEL))?.kind, 'Slow to start');
  assert.ok(await page.evaluate(() => {
    const panel = document.querySelector('#findings-panel');
    const others = [...document.querySelectorAll('#content .panel, #content .tile')].filter((p) => p !== panel);
    return others.length > 0 && others.every((p) => panel.compareDocumentPosition(p) & Node.DOCUMENT_POSITION_FOLLOWING);
  }), 'the findings come before every other panel');

  const texts = await page.evaluate(() => ({
    models: [...document.querySelectorAll('#groups tbody tr td:nth-child(1)')].map((td) => td.textContent),
    scenarios: [...document.querySelectorAll('#groups tbody tr td:nth-child(2)')].map((td) => td.textContent),
    modelOptions: [...document.querySelectorAll('#filter-model option')].map((o) => o.textContent),
    scenarioOptions: [...document.querySelectorAll('#filter-scenario option')].map((o) => o.textContent),
    images: document.querySelectorAll('img').length,
    scripts: document.querySelectorAll('script').length,
    pwned: window.__pwned,
  }));
  assert.ok(texts.models.includes(HOSTILE_MODEL), `table models: ${JSON.stringify(texts.models)}`);
  assert.ok(texts.scenarios.includes(HOSTILE_SCENARIO), `table scenarios: ${JSON.stringify(texts.scenarios)}`);
  assert.ok(texts.modelOptions.includes(HOSTILE_MODEL), `model options: ${JSON.stringify(texts.modelOptions)}`);
  assert.ok(texts.scenarioOptions.includes(HOSTILE_SCENARIO), `scenario options: ${JSON.stringify(texts.scenarioOptions)}`);
  assert.equal(texts.models.length, MODELS.length * SCENARIOS.length, 'one row per model and scenario');
  assert.equal(texts.images, 0, 'no img element was created from a name');
  assert.equal(texts.scripts, 1, 'no script element was created from a name');
  assert.equal(texts.pwned, undefined, 'no injected script ran');

  const total = (await api(`/api/summary?from=${from}&to=${to}&${SLO}`)).groups[0];
  assert.equal(total.count, RECORDS);
  assertShows(await text(page, '#value-ttft'), total.ttftMs.p50, 'TTFT p50 tile');
  assertShows(await text(page, '#detail-ttft'), total.ttftMs.p90, 'TTFT p90 under its tile');
  assertShows(await text(page, '#value-tpot'), total.tpotMs.p50, 'TPOT p50 tile');
  assertShows(await text(page, '#detail-tpot'), total.tpotMs.p90, 'TPOT p90 under its tile');
  assertShows(await text(page, '#value-rpm'), total.rpm, 'RPM tile');
  assertShows(await text(page, '#detail-rpm'), total.count, 'stream count under the RPM tile');
  assertShows(await text(page, '#value-throughput'), total.tokenThroughput, 'throughput tile');

  // Do users give up? The stop rate per band of TTFT and of TPOT, as the API counts them.
  assert.ok(total.stopRate > 0, 'the records include streams the user stopped or left');
  assert.ok((await text(page, '#stops-overall')).startsWith(`${percent(total.stopRate)} of the answers`), 'the overall stop rate in the heading');
  const full = Number((await text(page, '#stops-scale')).match(/([\d.]+)%/)[1]) / 100;
  const LABELS = {
    ttftMs: ['< 0.5 s', '0.5–1 s', '1–2 s', '2–4 s', '4–8 s', '≥ 8 s'],
    tpotMs: ['< 20 ms', '20–40 ms', '40–80 ms', '80–160 ms', '160–320 ms', '≥ 320 ms'],
  };
  for (const [metric, id] of [['ttftMs', '#stops-ttft'], ['tpotMs', '#stops-tpot']]) {
    const bands = total.stopsBy[metric];
    assert.equal(bands.length, 6, `${metric}: six bands from the API`);
    assert.ok(bands.some((b) => b.stopRate > 0) && bands.some((b) => b.streams === 0), `${metric}: stops in some band, an empty band too: ${JSON.stringify(bands)}`);
    const shown = await page.$$eval(`${id} tbody tr`, (trs) => trs.map((tr) => ({
      cells: [...tr.children].map((c) => c.textContent.trim()),
      bar: Number(tr.querySelector('svg.bar rect.fill')?.getAttribute('width')),
    })));
    assert.deepEqual(shown.map((r) => r.cells[0]), LABELS[metric], `${metric}: one row per band, labelled`);
    shown.forEach(({ cells: [, rate, streams], bar }, i) => {
      assert.equal(rate, percent(bands[i].stopRate), `${metric} ${LABELS[metric][i]}: stop rate`);
      assert.equal(streams, count(bands[i].streams), `${metric} ${LABELS[metric][i]}: streams`);
      assert.ok(Math.abs((bar / 100) * full - (bands[i].stopRate ?? 0)) < 0.002, `${metric} ${LABELS[metric][i]}: bar ${bar}% of ${full} for ${bands[i].stopRate}`);
    });
    assert.ok(shown.some((r) => r.cells[1] === '—'), `${metric}: a band without streams shows a dash`);
  }

  // TPOT by answer length: the three bands' figures.
  const lengths = await page.$$eval('#by-length tbody tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent.trim())));
  const expectedLengths = [['1-50', '1–50 tokens'], ['51-500', '51–500 tokens'], ['over500', 'over 500 tokens']].map(([key, name]) => {
    const b = total.byLength[key];
    return [name, count(b.count), ms(b.tpotMs.p50), ms(b.tpotMs.p90), percent(b.stallRate)];
  });
  assert.deepEqual(lengths, expectedLengths, 'one row per length band, the API\'s figures');
  assert.ok(Object.values(total.byLength).every((b) => b.count > 0 && b.tpotMs.p50 !== null), 'every length band has streams');

  // The stop rate per model and scenario, beside the stall rate.
  const byModel = (await api(`/api/summary?from=${from}&to=${to}&${SLO}&groupBy=model,scenario`)).groups;
  const groupsTable = await page.evaluate(() => ({
    heads: [...document.querySelectorAll('#groups thead th')].map((th) => th.textContent),
    rows: [...document.querySelectorAll('#groups tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent)),
  }));
  const stopColumn = groupsTable.heads.indexOf('stop rate');
  assert.equal(groupsTable.heads[stopColumn - 1], 'stall rate', `the stop rate next to the stall rate: ${groupsTable.heads}`);
  assert.equal(groupsTable.rows.length, byModel.length);
  for (const g of byModel) {
    const row = groupsTable.rows.find((r) => r[0] === g.key.model && r[1] === g.key.scenario);
    assert.equal(row?.[stopColumn], percent(g.stopRate), `stop rate of ${g.key.model} / ${g.key.scenario}`);
  }
  assert.ok(byModel.some((g) => g.stopRate > 0), 'some group has stops');

  // The A/B panel, with no experiment start set: the experiment is the window, the session the sample.
  const compare = await api(`/api/compare?dimension=variant&a=A&b=B&metric=tpotMs&unit=session&split=50:50&mde=0.1&from=${from}&to=${to}&${SLO}`);
  assert.deepEqual([compare.a.units, compare.b.units, compare.a.streams, compare.b.streams, compare.mixedUnits], [SESSIONS_PER_ARM, SESSIONS_PER_ARM, RECORDS / 2, RECORDS / 2, 0], 'each session in one arm');
  assert.equal(compare.sequential.status, 'a is better', 'A streams faster, clearly enough to decide');
  assert.ok(compare.secondary.stopRate.a > 0 && compare.secondary.stopRate.b > 0, `both arms have stops: ${JSON.stringify(compare.secondary.stopRate)}`);
  const ab = await shownComparison(page);
  assert.equal(ab.status, 'A is better', 'the decision as the headline, the better arm by its name');
  assert.equal(ab.srm, null, 'no sample ratio warning for an even split');
  assertComparison(ab, compare);
  assert.equal(await experimentStart(page), Math.floor(from / 1000) * 1000, 'the experiment starts with the window when no start is set');
  assert.match(await text(page, '#ab-window'), /each look extends its end and keeps its start.*No start set/);
  mkdirSync(join(ROOT, 'target'), { recursive: true });
  await page.locator('#ab').screenshot({ path: join(ROOT, 'target/dashboard-ab.png') });

  const slowest = (await api(`/api/streams?from=${from}&to=${to}&sort=tpotMs&limit=20`)).streams;
  assert.equal(slowest.length, 20);
  const rows = await page.$$eval('#streams tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.equal(rows.length, 20, 'the 20 worst streams by TPOT, the default');
  rows.forEach((row, i) => {
    assert.equal(row[1], slowest[i].model, `row ${i}: model, as text`);
    assertShows(row[6], slowest[i].tpotMs, `row ${i}: TPOT`);
  });
  assert.ok(slowest.every((s) => s.variant === 'B'), 'the slowest by TPOT are the slow variant\'s');
  assert.ok(rows.some((row) => row[2] === HOSTILE_SCENARIO), 'a hostile scenario among them, shown as text');
  assert.ok((await page.$eval('#streams tbody td', (td) => td.title)).endsWith(`, stream ${slowest[0].id}`), 'the date and the stream id on hover');
  await page.selectOption('#slowest-sort', 'ttftMs');
  await page.waitForFunction(() => document.querySelector('#streams th[aria-sort]')?.textContent === 'TTFT');
  const worstTtft = (await api(`/api/streams?from=${from}&to=${to}&sort=ttftMs&limit=1`)).streams[0];
  assertShows(await page.$eval('#streams tbody tr td:nth-child(6)', (td) => td.textContent), worstTtft.ttftMs, 'ranked by TTFT once picked');
  assert.match(await page.evaluate(() => location.hash), /slowest=ttftMs/, 'the ranking is in the shared link');

  // The stream explorer: the picked stream's cadence (the worst by TPOT, picked first, stays picked
  // while the table lists it; else the worst), then the one a click picks.
  const byTtft = (await api(`/api/streams?from=${from}&to=${to}&sort=ttftMs&limit=20`)).streams;
  const drawn = () => page.evaluate(() => ({
    caption: document.querySelector('#cadence-caption').textContent,
    points: [...document.querySelectorAll('#cadence circle.point title')].map((t) => t.textContent),
    ticks: [...document.querySelectorAll('#cadence text:not([class])')].map((t) => t.textContent),
    stalls: document.querySelectorAll('#cadence path.stall').length,
    ideal: document.querySelectorAll('#cadence path.ideal').length,
    picked: [...document.querySelectorAll('#streams tbody tr')].findIndex((tr) => tr.getAttribute('aria-selected') === 'true'),
  }));
  const expectDrawn = (got, stream, index) => {
    assert.equal(got.picked, index, 'the picked row is marked');
    assert.ok(got.caption.endsWith(`stream ${stream.id}`), `the caption names the stream: ${got.caption}`);
    assert.deepEqual(got.points, stream.cadence.map(([ms, tokens]) => `${ms.toLocaleString('en-US')} ms: ${tokens.toLocaleString('en-US')} tokens`), 'one dot per point of the API\'s cadence');
    assert.equal(got.ticks.length, 10, 'five ticks on each axis');
    for (const tick of got.ticks) assert.match(tick, /^\d[\d,]*(\.\d*[1-9])?( ms| s)?$/, 'an axis tick without trailing zeros');
    assert.equal(got.stalls, stream.stalls.count, 'a red stretch per stall, none on the steady stretches');
    assert.equal(got.ideal, 1, 'the steady stream to compare with');
  };
  const kept = Math.max(0, byTtft.findIndex((s) => s.id === slowest[0].id));
  expectDrawn(await drawn(), byTtft[kept], kept);
  const stalledAt = byTtft.findIndex((s, i) => i !== kept && s.cadence?.length && s.stalls?.count > 0);
  assert.ok(stalledAt >= 0, 'a stalled stream among the worst by TTFT');
  await page.click(`#streams tbody tr:nth-child(${stalledAt + 1})`);
  await page.waitForFunction((id) => document.querySelector('#cadence-caption').textContent.endsWith(id), `stream ${byTtft[stalledAt].id}`);
  const stalled = await drawn();
  expectDrawn(stalled, byTtft[stalledAt], stalledAt);
  assert.ok(stalled.stalls >= 1, 'the stall is drawn');
  const bare = byTtft.findIndex((s) => s.cadence === null);
  assert.ok(bare >= 0, 'a stream stored without a cadence among them');
  await page.focus(`#streams tbody tr:nth-child(${bare + 1})`);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /without a cadence/.test(document.querySelector('#cadence').textContent));
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-selected')), 'true', 'the keyboard keeps its place on the picked row');
  await page.click(`#streams tbody tr:nth-child(${stalledAt + 1})`);

  const charts = await page.evaluate(() => ['ttft', 'tpot', 'rpm', 'throughput', 'tpot-distribution', 'gap-distribution']
    .filter((name) => document.querySelector(`#chart-${name} .uplot canvas`)?.width > 0));
  assert.deepEqual(charts, ['ttft', 'tpot', 'rpm', 'throughput', 'tpot-distribution', 'gap-distribution'], 'every chart has a canvas');
  const legend = await page.evaluate(() => [...document.querySelectorAll('#chart-tpot-distribution .u-legend .u-label')].map((l) => l.textContent));
  assert.deepEqual(legend.slice(1), ['A', 'B'], 'one distribution curve per variant');

  await page.screenshot({ path: join(ROOT, 'target/dashboard.png'), fullPage: true });
  assert.deepEqual(dialogs, [], 'no dialog opened');
  assert.deepEqual(pageErrors, [], 'no uncaught error in the page');
  assert.deepEqual(await page.evaluate(() => window.__cspViolations), [], 'the page, uPlot included, runs under its strict CSP');
  await page.close();
});

test('the page is served with a strict Content-Security-Policy, frame-ancestors \'none\' and nosniff', async () => {
  const response = await fetch(`${collector.url}/`);
  const csp = response.headers.get('content-security-policy');
  for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'"]) {
    assert.ok(csp.split(';').map((d) => d.trim()).includes(directive), `${directive} in ${csp}`);
  }
  assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
});

test('with --read-key the page asks for the key once, keeps it for the tab, and sends it as a Bearer header', async () => {
  const READ_KEY = 'the-dashboard-read-key-0123';
  const keyed = await startCollector({ db: join(dir, 'keyed.db'), args: ['--read-key', READ_KEY], build: false });
  try {
    const posted = await fetch(`${keyed.url}/v1/beacons`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(envelope(records(0, 100), 'keyed', 's-keyed')) });
    assert.equal(posted.status, 200, 'ingest needs no read key');
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const dialogs = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      dialog.dismiss();
    });
    const sent = [];
    page.on('request', (r) => r.url().includes('/api/') && sent.push(r.headers().authorization ?? null));
    await recordCspViolations(page);
    await page.goto(`${keyed.url}/#from=${from}&to=${to}`);
    await page.waitForSelector('#read-key:not([hidden])', { timeout: 10_000 });
    assert.match(await text(page, '#read-key-problem'), /need its read key/);
    await page.fill('#read-key-input', 'a-wrong-key-of-some-length');
    await page.press('#read-key-input', 'Enter');
    await page.waitForFunction(() => document.querySelector('#read-key-problem').textContent.includes('not accepted'), null, { timeout: 10_000 });
    assert.equal(await page.$eval('#read-key', (f) => f.hidden), false, 'asked again after a wrong key');
    await page.fill('#read-key-input', READ_KEY);
    await page.click('#read-key button[type="submit"]');
    await page.waitForFunction(() => document.querySelector('#updated').textContent.startsWith('updated'), null, { timeout: 10_000 });
    assert.equal(await page.$eval('#read-key', (f) => f.hidden), true);
    assertShows(await text(page, '#detail-rpm'), 100, 'the data behind the key');
    assert.equal(await page.evaluate(() => sessionStorage.getItem('llm-ux-read-key')), READ_KEY, 'kept for the tab');
    assert.ok(sent.includes(`Bearer ${READ_KEY}`), 'sent as a Bearer header');
    assert.ok(!sent.some((a) => a && a !== `Bearer ${READ_KEY}` && a !== 'Bearer a-wrong-key-of-some-length'), `only keys typed are sent: ${JSON.stringify([...new Set(sent)])}`);

    sent.length = 0;
    await page.reload();
    await page.waitForFunction(() => document.querySelector('#updated').textContent.startsWith('updated'), null, { timeout: 10_000 });
    assert.equal(await page.$eval('#read-key', (f) => f.hidden), true, 'not asked again in this tab');
    assert.ok(sent.length > 0 && sent.every((a) => a === `Bearer ${READ_KEY}`), `every request carries the key: ${JSON.stringify([...new Set(sent)])}`);
    assert.deepEqual(dialogs, [], 'asked in the page, not with a dialog');
    assert.deepEqual(await page.evaluate(() => window.__cspViolations), []);
    await page.close();

    const other = await browser.newPage();
    await other.goto(`${keyed.url}/#from=${from}&to=${to}`);
    await other.waitForSelector('#read-key:not([hidden])', { timeout: 10_000 });
    await other.close();
  } finally {
    await keyed.close();
  }
});

test('a shared link with a filter shows only that model, and the A/B panel lists hostile arms as text', async () => {
  const { page, dialogs } = await open(`#from=${from}&to=${to}&model=${encodeURIComponent(HOSTILE_MODEL)}&ab=scenario`);
  assert.equal(await page.$eval('#filter-model', (s) => s.value), HOSTILE_MODEL);
  const models = await page.$$eval('#groups tbody tr td:nth-child(1)', (tds) => tds.map((td) => td.textContent));
  assert.deepEqual(models, [HOSTILE_MODEL, HOSTILE_MODEL], 'rows of the filtered model only');
  const arms = await page.$$eval('#ab-a option', (options) => options.map((o) => o.textContent));
  assert.deepEqual(arms, [...SCENARIOS].sort((x, y) => x.localeCompare(y)), 'the arms are the scenarios, as text');
  const compare = await api(`/api/compare?dimension=scenario&a=${encodeURIComponent(arms[0])}&b=${encodeURIComponent(arms[1])}&metric=tpotMs&from=${from}&to=${to}&model=${encodeURIComponent(HOSTILE_MODEL)}&${SLO}`);
  assert.equal(await text(page, '#ab-verdict'), compare.verdict);
  assert.ok(compare.mixedUnits > 0, 'scenarios are not assigned per session: some sessions have both');
  assert.equal(await text(page, '#ab-notes'), `${count(compare.mixedUnits)} sessions saw both arms and are left out.`);
  assert.equal(await page.evaluate(() => document.querySelectorAll('img').length + (window.__pwned ?? 0)), 0);
  assert.deepEqual(dialogs, []);

  await page.click('#range button[value="6h"]');
  await page.waitForFunction(() => location.hash.includes('range=6h'));
  assert.match(await page.evaluate(() => location.hash), /model=/, 'the filter stays in the hash');
  await page.close();
});

test('the A/B experiment has its own start, kept in the link: each look extends its end and keeps its start', async () => {
  const { page } = await open('#range=1h');
  const start = Math.floor((now - 30 * 60_000) / 1000) * 1000;
  const nextLook = (predicate = () => true) => page.waitForRequest((r) => r.url().includes('/api/compare?') && predicate(new URL(r.url()).searchParams)).then((r) => new URL(r.url()).searchParams);
  const firstLook = nextLook((params) => params.get('from') === String(start));
  await page.fill('#ab-start', dateTimeInput(start));
  const first = await firstLook;
  assert.match(await page.evaluate(() => location.hash), new RegExp(`abStart=${start}`), 'the start in the shared link');
  const compare = await api(`/api/compare?${first}`);
  await page.waitForFunction((verdict) => document.querySelector('#ab-verdict')?.textContent === verdict, compare.verdict);
  assert.deepEqual((await shownComparison(page)).units[0], ['sessions', count(compare.a.units), count(compare.b.units)], 'the sessions since the start');
  assert.ok(compare.a.units + compare.b.units + compare.mixedUnits < 2 * SESSIONS_PER_ARM, 'fewer sessions than in the whole window');
  assert.doesNotMatch(await text(page, '#ab-window'), /No start set/);
  assert.equal(await page.$eval('#ab-start-clear', (button) => button.hidden), false, 'a set start can be reset');

  // Another look (as the 10 s refresh does): the same start, a later end.
  await page.waitForTimeout(20);
  const secondLook = nextLook();
  await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
  const second = await secondLook;
  assert.equal(second.get('from'), String(start), 'the start is kept');
  assert.ok(Number(second.get('to')) > Number(first.get('to')), `the end moves on: ${first.get('to')} then ${second.get('to')}`);

  const reopened = await open(`#range=1h&abStart=${start}`);
  assert.equal(await experimentStart(reopened.page), start, 'the start is in the shared link');
  await reopened.page.click('#ab-start-clear');
  await reopened.page.waitForFunction(() => !location.hash.includes('abStart'));
  await reopened.page.close();
  await page.close();
});

test('an expected split the sessions do not follow shows the sample ratio warning and names no winner', async () => {
  const { page } = await open(`#from=${from}&to=${to}&split=3:1&detect=1`);
  const compare = await api(`/api/compare?dimension=variant&a=A&b=B&metric=tpotMs&unit=session&split=3:1&mde=0.01&from=${from}&to=${to}&${SLO}`);
  assert.equal(compare.srm.mismatch, true, `${SESSIONS_PER_ARM} sessions each where 3:1 was expected`);
  assert.equal(compare.sequential.status, 'sample ratio mismatch');
  assert.ok(compare.power.moreUnitsPerArm > 0, 'a 1% difference needs more sessions than there are');
  const ab = await shownComparison(page);
  assert.equal(ab.status, 'Sample ratio mismatch: no decision');
  const { observed, expected } = compare.srm;
  const total = observed[0] + observed[1];
  assert.ok(ab.srm?.startsWith(`Sample ratio mismatch: ${count(observed[0])} sessions in a (A) and ${count(observed[1])} in b (B), where about ${count(total * expected[0])} and ${count(total * expected[1])} were expected (${percent(expected[0])} : ${percent(expected[1])}), p ${pValue(compare.srm.pValue)}.`), ab.srm);
  assert.ok(await page.locator('#ab-srm').isVisible(), 'the warning shows');
  assertComparison(ab, compare);
  assert.equal(await page.$eval('#ab-split', (i) => i.value), '3:1', 'the split from the link');
  await page.locator('#ab').screenshot({ path: join(ROOT, 'target/dashboard-ab-srm.png') });
  await page.close();
});

test('the unit picker asks for users: counts in users, streams without a user unit said, kept in the link', async () => {
  const { page } = await open(`#from=${from}&to=${to}`);
  const look = page.waitForRequest((r) => r.url().includes('/api/compare?') && new URL(r.url()).searchParams.get('unit') === 'user');
  await page.selectOption('#ab-unit', 'user');
  const compare = await api(`/api/compare?${new URL((await look).url()).searchParams}`);
  assert.ok(compare.streamsWithoutUnit > 0, 'this page sends no experimentUnit');
  await page.waitForFunction((verdict) => document.querySelector('#ab-verdict')?.textContent === verdict, compare.verdict);
  assert.match(compare.verdict, /^Too few users to judge.*createMeter\(\{ experimentUnit \}\)/);
  assert.deepEqual((await shownComparison(page)).units[0], ['users', count(compare.a.units), count(compare.b.units)]);
  assert.equal(await text(page, '#ab-notes'), `${count(compare.streamsWithoutUnit)} streams have no user unit and are left out.`);
  assert.match(await page.evaluate(() => location.hash), /unit=user/, 'the unit in the shared link');
  await page.close();
});

test('a finding\'s button filters the page to its value; a window where nothing stands out says so', async () => {
  const { page } = await open(`#from=${from}&to=${to}`);
  const variantFinding = (await api(`/api/diagnosis?from=${from}&to=${to}`)).findings.findIndex((f) => f.evidence.dimension === 'variant');
  const withinB = (await api(`/api/diagnosis?from=${from}&to=${to}&variant=B`)).findings;
  await page.click(`#findings li:nth-child(${variantFinding + 1}) .finding-filter`);
  await page.waitForFunction((n) => location.hash.includes('variant=B') && document.querySelectorAll('#findings li').length === n, withinB.length);
  assert.equal(await page.$eval('#filter-variant', (s) => s.value), 'B');
  assert.deepEqual((await shownFindings(page)).map((f) => f.text), withinB.map((f) => f.text), 'the findings among B\'s streams');
  await page.close();

  // Five minutes hold about 30 streams: too few for any comparison.
  const quiet = { from: now - 50 * 60_000, to: now - 45 * 60_000 };
  assert.deepEqual((await api(`/api/diagnosis?from=${quiet.from}&to=${quiet.to}`)).findings, []);
  const calm = await open(`#from=${quiet.from}&to=${quiet.to}`);
  assert.equal(await calm.page.$$eval('#findings li', (lis) => lis.length), 0);
  assert.match(await text(calm.page, '#findings'), /^Nothing stands out in this window: each model, scenario, variant, app version and connection was compared/);
  await calm.page.close();
});

test('filtered to variant B, the A/B panel still compares the variants (without that filter)', async () => {
  const { page } = await open(`#from=${from}&to=${to}&variant=B`);
  const compare = await api(`/api/compare?dimension=variant&a=A&b=B&metric=tpotMs&from=${from}&to=${to}&${SLO}`);
  assert.equal(await text(page, '#ab-verdict'), compare.verdict);
  assert.equal(await page.$eval('#banner', (b) => b.hidden), true, 'no error');
  assertShows(await text(page, '#detail-rpm'), RECORDS / 2, 'the tiles are filtered: B streams only');
  await page.close();
});

test('a window without streams shows the hint, an API error shows in the banner', async () => {
  const empty = await open('#from=1000&to=2000', '#empty:not([hidden])');
  assert.match(await text(empty.page, '#empty'), /No streams in this range/);
  assert.equal(await empty.page.$eval('#content', (c) => c.hidden), true, 'no empty tiles and charts');
  assert.equal(await empty.page.$eval('#findings-panel', (p) => p.checkVisibility()), false, 'nor a diagnosis of no streams');
  await empty.page.close();

  const failing = await open(`#from=${from}&to=${to}&slo.ttftMs=-5`, '#banner:not([hidden])');
  const problem = (await api(`/api/summary?from=${from}&to=${to}&slo.ttftMs=-5`, 400)).problem;
  const banner = await text(failing.page, '#banner');
  assert.ok(banner.includes('slo.ttftMs') && banner.includes(problem), `banner: ${banner}`);
  const diagnosis = (await api(`/api/diagnosis?from=${from}&to=${to}`)).findings;
  assert.equal((await shownFindings(failing.page)).length, diagnosis.length, 'the findings (no SLO taken) still show');
  await failing.page.close();
});

/** Opens the dashboard at `hash` and waits for `ready` (by default: the end of its first refresh). */
async function open(hash, ready = null) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const dialogs = [];
  const pageErrors = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    dialog.dismiss();
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await recordCspViolations(page);
  await page.goto(`${collector.url}/${hash}`);
  if (ready) await page.waitForSelector(ready, { timeout: 10_000 });
  else await page.waitForFunction(() => document.querySelector('#updated').textContent.startsWith('updated'), null, { timeout: 10_000 });
  return { page, dialogs, pageErrors };
}

/** Collects the page's Content-Security-Policy violations in `window.__cspViolations`. */
async function recordCspViolations(page) {
  await page.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
}

async function api(path, status = 200) {
  const response = await fetch(`${collector.url}${path}`);
  const body = await response.json();
  assert.equal(response.status, status, `${path}: ${JSON.stringify(body)}`);
  return body;
}

const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim());

/** The findings the page lists, each as its parts' text. */
const shownFindings = (page) => page.$$eval('#findings li', (lis) => lis.map((li) => ({
  severity: li.querySelector('.severity').textContent,
  kind: li.querySelector('strong').textContent,
  text: li.querySelector('.finding-text').textContent,
  evidence: li.querySelector('.finding-evidence').textContent,
})));

/** The A/B panel's parts, as text (null for a part not shown). */
const shownComparison = (page) => page.evaluate(() => {
  const textOf = (selector) => document.querySelector(selector)?.textContent.trim() ?? null;
  const rows = (selector) => [...document.querySelectorAll(`${selector} tbody tr`)].map((tr) => [...tr.children].map((c) => c.textContent));
  return {
    status: textOf('#ab-status'),
    srm: textOf('#ab-srm'),
    arms: [...document.querySelectorAll('#ab-arms thead .arm')].map((th) => th.textContent),
    units: rows('#ab-arms'),
    difference: textOf('#ab-difference'),
    interval: textOf('#ab-interval'),
    power: textOf('#ab-power'),
    fixed: textOf('#ab-fixed'),
    secondaryCaption: textOf('#ab-secondary caption'),
    secondary: rows('#ab-secondary'),
    verdict: textOf('#ab-verdict'),
  };
});

/** The panel shows `compare` (variants A and B on TPOT) as the page formats it. */
function assertComparison(shown, compare) {
  const { a, b, difference, sequential, power, secondary } = compare;
  assert.equal(shown.verdict, compare.verdict, 'the verdict, verbatim');
  assert.deepEqual(shown.arms, ['a: A', 'b: B']);
  assert.deepEqual(shown.units, [
    ['sessions', count(a.units), count(b.units)],
    ['streams', count(a.streams), count(b.streams)],
    ['mean TPOT', ms(a.mean), ms(b.mean)],
    ['median TPOT', ms(a.median), ms(b.median)],
  ], 'sessions, streams, mean and median per arm');
  assert.ok(shown.difference.startsWith(`mean TPOT, b − a: ${signed(difference.estimate, ms)} (${signed(difference.relative, percent)}); 95% interval, always valid: `), shown.difference);
  assert.equal(shown.interval, `${signed(sequential.ci95[0], ms)} to ${signed(sequential.ci95[1], ms)}`, 'the confidence sequence');
  const needed = power.moreUnitsPerArm > 0 ? `About ${count(power.moreUnitsPerArm)} more sessions per arm` : 'Enough sessions';
  assert.equal(shown.power, `${needed} to detect a ${tick(power.relativeDifference * 100)}% difference; detectable now: ${percent(power.detectableNow)} (${count(power.unitsPerArm)} per arm give 80% power at a fixed horizon; the always-valid decision needs about ${count(power.sequentialUnitsPerArm)})`);
  assert.ok(shown.fixed.startsWith('Fixed horizon, valid only for a sample size fixed beforehand'), shown.fixed);
  assert.ok(shown.fixed.endsWith(`b − a ${signed(difference.estimate, ms)}, 95% CI ${signed(difference.ci95[0], ms)} to ${signed(difference.ci95[1], ms)}, p ${pValue(difference.pValue)}`), shown.fixed);
  assert.match(shown.secondaryCaption, /^secondary \(not the decision\)/);
  const share = (label, f) => [label, percent(f.a), percent(f.b), signed(f.difference, points), `p ${pValue(f.pValue)}`];
  assert.deepEqual(shown.secondary, [
    ['median TPOT', ms(secondary.median.a), ms(secondary.median.b), signed(secondary.median.difference, ms), `p ${pValue(secondary.median.pValue)}`],
    share('stall rate', secondary.stallRate),
    share('stop rate', secondary.stopRate),
    share('goodput', secondary.goodput),
  ], 'the secondary figures with their fixed-horizon p-values');
}

/** The A/B experiment's start the page shows, in epoch ms (the input keeps whole seconds). */
const experimentStart = (page) => page.$eval('#ab-start', (input) => new Date(input.value).getTime());

/** The last number in `shown` ("p90 1,234.5 ms") equals `expected` to the digits shown. */
function assertShows(shown, expected, what) {
  const match = /(-?[\d,]+)(?:\.(\d+))?(?!.*\d)/.exec(shown);
  assert.ok(match, `${what}: no number in ${JSON.stringify(shown)}`);
  const value = Number(match[0].replaceAll(',', ''));
  const decimals = match[2]?.length ?? 0;
  assert.ok(Math.abs(value - expected) <= 0.5 * 10 ** -decimals + 1e-9, `${what}: shows ${JSON.stringify(shown)}, the API says ${expected}`);
}

/**
 * Records from index `start` to `end`, each STREAMS_PER_SESSION in a row a session of one variant:
 * variant B streams slower (TPOT) and stalls more than A, and the hostile-named model is slow to
 * start (two causes for the diagnosis); a few wait seconds for their first token, a few B streams
 * crawl, and the slower a stream the likelier the user stopped it (`aborted`) or left
 * (`incomplete`), always after its first token.
 */
function records(start, end) {
  const random = prng(start + 1);
  const giveUp = prng(start + 10_007); // its own sequence: the other figures stay as they were
  return Array.from({ length: end - start }, (_, k) => {
    const i = start + k;
    const variant = Math.floor(i / STREAMS_PER_SESSION) % 2 ? 'B' : 'A';
    const model = MODELS[i % 3 === 2 ? 1 : 0];
    const crawls = variant === 'B' && i % 29 === 5;
    const tpot = (variant === 'A' ? 18 + random() * 14 : 32 + random() * 30) * (crawls ? 3 : 1);
    const ttft = 250 + random() * 900 + (model === HOSTILE_MODEL ? 1200 : 0) + (i % 23 === 7 ? 2000 : 0) + (i % 41 === 11 ? 4500 : 0);
    const stopChance = 0.04 + Math.max(0, ttft - 1000) / 6000 + Math.max(0, tpot - 40) / 200;
    const u = giveUp();
    const status = u >= stopChance ? 'ok' : u < stopChance / 3 ? 'incomplete' : 'aborted';
    const tokens = 20 + Math.floor(random() * 700);
    // The B streams among those slow to start stall too: the worst by TTFT include stalls to draw.
    const stalled = variant === 'B' && (random() < 0.2 || i % 23 === 7);
    const gapP90 = tpot * (1.4 + random());
    const duration = ttft + tpot * (tokens - 1) + (stalled ? 900 : 0);
    // Steady, with the stall halfway; every seventh record comes from a package before the cadence.
    const half = Math.floor(tokens / 2);
    const beforeStall = Math.round(ttft + tpot * (half - 1));
    const cadence = [[Math.round(ttft), 1], [beforeStall, half], stalled && [beforeStall + 900, half + 1], [Math.round(duration), tokens]].filter(Boolean);
    return {
      id: `r-${i}`,
      startedAt: now - 50 * 60_000 + (i / RECORDS) * 49 * 60_000,
      url: 'https://api.example.com/v1/chat/completions',
      model,
      scenario: SCENARIOS[Math.floor(i / 2) % 2],
      variant,
      appVersion: '1.4.2',
      format: 'openai',
      status,
      httpStatus: 200,
      renderSource: 'dom',
      ttfbMs: ttft * 0.6,
      ttftMs: ttft,
      ttftArrivalMs: ttft - 8,
      ttfoMs: ttft,
      tpotMs: tpot,
      tpotArrivalMs: tpot - 0.5,
      tokensPerSecond: 1000 / tpot,
      outputTokens: tokens,
      tokenSource: 'usage',
      reasoningTokens: 0,
      outputEvents: tokens - 2,
      outputEventsByKind: { answer: tokens - 2, reasoning: 0, tool: 0 },
      gaps: { p50: tpot, p90: gapP90, p99: gapP90 * 1.5, max: stalled ? 900 : gapP90 * 2 },
      arrivalGaps: { p50: tpot, p90: gapP90, p99: gapP90 * 1.5, max: stalled ? 890 : gapP90 * 2 },
      jitterMs: tpot / 3,
      stalls: stalled ? { count: 1, count1000: 0, longestMs: 900, totalMs: 900 } : { count: 0, count1000: 0, longestMs: 0, totalMs: 0 },
      renderDelay: { p50: 3 + random() * 4, p90: 8 + random() * 8 },
      durationMs: duration,
      ...(i % 7 === 3 ? {} : { cadence }),
      hidden: false,
      finishReason: status === 'ok' ? 'stop' : null,
      anomalies: { malformedEvents: 0, oversizeDropped: 0, unterminatedLast: false },
      def: 1,
      connection: i % 5 === 0 ? '3g' : '4g',
      rttMs: 50,
      deviceMemoryGb: 8,
      cores: 8,
      browser: 'chromium',
    };
  });
}

function envelope(records, batchId, sessionId) {
  return { v: 1, def: 1, sentAt: now, sessionId, pageId: `p-${sessionId}`, batchId, retry: 0, sampleRate: 1, records };
}
