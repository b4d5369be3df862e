// npm run simulate, small: its own collector and servers (--standalone, a temporary database), a dozen
// chats in three pages; every chat must be stored and the A/B summary must show both variants.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const script = fileURLToPath(new URL('../../scripts/simulate.mjs', import.meta.url));

test('simulate --standalone stores every chat it measured and prints the summary by variant', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'llm-ux-simulate-'));
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [script, '--standalone', '--db', join(dir, 'beacons.db'), '--chats', '12', '--parallel', '3'], { timeout: 180_000 });
    assert.match(stdout, /simulate: 12 chats in \d+ s \(0 failed\)/, stdout);
    assert.match(stdout, /collector: 12 records stored for this run \(12 chats measured\)/, stdout);
    const rows = Object.fromEntries([...stdout.matchAll(/^\s+([AB])\s+(\d+)\s+([\d.]+)\s/gm)].map(([, variant, streams, ttft]) => [variant, { streams: Number(streams), ttft: Number(ttft) }]));
    assert.deepEqual(Object.keys(rows).sort(), ['A', 'B'], stdout);
    assert.equal(rows.A.streams + rows.B.streams, 12, stdout);
    // The fastest profile's first token is scheduled at 150 ms: no median can be under it.
    assert.ok(rows.A.ttft >= 150 && rows.B.ttft >= 150, stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
