// Brotli (quality 11) of a file as the mean over 11 compressions: as it is, and behind 10 fixed
// pseudo-random printable prefixes of 1 to 64 bytes (each prefix's own size subtracted). One build's
// figure moves about ±40 B with the bytes around a change, which is as much as a size step is worth
// now; the prefixes spread that noise and the mean moves with the change itself (docs/size.md).
//
//   node scripts/brotli-mean.mjs dist/index.js
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants } from 'node:zlib';

const [path] = process.argv.slice(2);
if (!path) {
  console.error('usage: node scripts/brotli-mean.mjs FILE');
  process.exit(2);
}
const file = readFileSync(path);
const brotli = (bytes) => brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
let seed = 12345;
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const sizes = [brotli(file)];
for (let k = 0; k < 10; k++) {
  const prefix = Buffer.from(Array.from({ length: 1 + k * 7 }, () => 32 + Math.floor(random() * 90)));
  sizes.push(brotli(Buffer.concat([prefix, file])) - brotli(prefix));
}
const mean = sizes.reduce((sum, size) => sum + size, 0) / sizes.length;
console.log(`${path}: brotli ${sizes[0]} B; mean of 11 ${mean.toFixed(1)} B (${sizes.join(' ')})`);
