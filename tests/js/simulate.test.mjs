// npm run simulate, small: its own collector and servers (--standalone, a temporary database), a dozen
// chats in three pages, every user impatient; every chat must be stored, the A/B summary must show both
// variants, its stop rates must count the streams the simulated users stopped, and the diagnosis of the
// run's window follows. (tests/js/diagnosis-simulated.test.mjs checks what the diagnosis finds.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const script = fileURLToPath(new URL('../../scripts/simulate.mjs', import.meta.url));

test('simulate --standalone stores every chat it measured and prints the summary by variant and the diagnosis', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'llm-ux-simulate-'));
  try {
    const args = [script, '--standalone', '--db', join(dir, 'beacons.db'), '--chats', '12', '--parallel', '3', '--impatient', '1'];
    const { stdout } = await promisify(execFile)(process.execPath, args, { timeout: 180_000 });
    const stopped = Number(stdout.match(/simulate: 12 chats in \d+ s \(0 failed, (\d+) stopped by the user\)/)?.[1]);
    assert.ok(Number.isInteger(stopped), stdout);
    assert.match(stdout, /collector: 12 records stored for this run \(12 chats measured\)/, stdout);
    const rows = Object.fromEntries([...stdout.matchAll(/^\s+([AB])\s+(\d+)\s+([\d.]+)\s.*\s(–|[\d.]+%)$/gm)].map(([, variant, streams, ttft, stopRate]) =>
      [variant, { streams: Number(streams), ttft: Number(ttft), stops: stopRate === '–' ? 0 : Math.round((parseFloat(stopRate) / 100) * Number(streams)) }]));
    assert.deepEqual(Object.keys(rows).sort(), ['A', 'B'], stdout);
    assert.equal(rows.A.streams + rows.B.streams, 12, stdout);
    // Every measured stream reached its first token: the stop rates count exactly the stopped ones.
    assert.equal(rows.A.stops + rows.B.stops, stopped, stdout);
    // The fastest profile's first token is scheduled at 150 ms: no median can be under it.
    assert.ok(rows.A.ttft >= 150 && rows.B.ttft >= 150, stdout);
    // A dozen chats are too few for any finding (30 streams a side at least).
    assert.match(stdout, /^collector: GET \/api\/diagnosis\?from=\d+&to=\d+: nothing found$/m, stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
