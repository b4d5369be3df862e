// The README fits on a few screens (issue 37: at most 300 lines; details go to docs/), and every
// relative link in it and in docs/ points to a file that exists and, with a #fragment, to a heading
// of that file (GitHub's anchors: lowercase, punctuation dropped, spaces to hyphens).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];

const anchors = (file) => {
  const slugs = new Map();
  const out = new Set();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (!heading) continue;
    const base = heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = slugs.get(base) ?? 0;
    slugs.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
};

test('the README is at most 300 lines', () => {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n').length;
  assert.ok(lines <= 300, `README.md has ${lines} lines: move details to docs/`);
});

test('relative links in the README and docs/ resolve, anchors included', () => {
  const broken = [];
  for (const page of pages) {
    const text = readFileSync(join(root, page), 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue;
      const [path, fragment] = target.split('#');
      const file = path ? join(root, dirname(page), path) : join(root, page);
      if (!existsSync(file)) broken.push(`${page}: ${target} (no ${relative(root, file)})`);
      else if (fragment && file.endsWith('.md') && !anchors(file).has(fragment)) broken.push(`${page}: ${target} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});
