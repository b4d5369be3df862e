// The TypeScript declarations that ship in dist/ compile against a usage file of the documented API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

test('index.d.ts type-checks the documented usage', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const tsc = spawnSync(
    process.execPath,
    [`${root}node_modules/typescript/bin/tsc`, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext',
      '--target', 'es2022', '--lib', 'es2022,dom', `${root}tests/js/types/usage.ts`],
    { cwd: root, encoding: 'utf8' },
  );
  assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
});
