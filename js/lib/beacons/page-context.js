// Context read once per page and put on every record: network type and RTT, device memory, cores,
// and a coarse browser family. Coarse on purpose: enough to split results, too little to identify.

import { OTHER_FIELDS, fits } from './record-bounds.js';

export function pageContext() {
  const nav = globalThis.navigator ?? {};
  const connection = nav.connection ?? {};
  const context = {
    connection: connection.effectiveType ?? null,
    rttMs: connection.rtt ?? null,
    deviceMemoryGb: nav.deviceMemory ?? null,
    cores: Number.isInteger(nav.hardwareConcurrency) ? nav.hardwareConcurrency : null,
  };
  // A value outside the beacon contract (an odd browser) is left out: it would cost every record. The
  // other fields are not in `context`, and what is absent fits.
  for (const field of OTHER_FIELDS) {
    if (!fits(field, context[field[0]])) context[field[0]] = null;
  }
  context.browser = browserFamily(nav.userAgent ?? '');
  return context;
}

function browserFamily(userAgent) {
  if (/Edg\//.test(userAgent)) return 'edge';
  if (/Firefox\//.test(userAgent)) return 'firefox';
  if (/Chrom(e|ium)\//.test(userAgent)) return 'chromium';
  if (/Safari\//.test(userAgent)) return 'safari';
  if (/Node\.js|node/i.test(userAgent)) return 'node';
  return 'other';
}
