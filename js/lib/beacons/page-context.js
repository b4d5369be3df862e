// Context read once per page and put on every record: network type and RTT, device memory, cores,
// and a coarse browser family. Coarse on purpose: enough to split results, too little to identify.

import { fits } from './record-bounds.js';

export function pageContext() {
  const nav = globalThis.navigator ?? {};
  const connection = nav.connection ?? {};
  // A value outside the beacon contract (an odd browser) is left out: it would cost every record.
  const bounded = (field, value) => (fits(field, value) ? (value ?? null) : null);
  return {
    connection: bounded('connection', connection.effectiveType),
    rttMs: bounded('rttMs', connection.rtt),
    deviceMemoryGb: bounded('deviceMemoryGb', nav.deviceMemory),
    cores: Number.isInteger(nav.hardwareConcurrency) ? bounded('cores', nav.hardwareConcurrency) : null,
    browser: browserFamily(nav.userAgent ?? ''),
  };
}

function browserFamily(userAgent) {
  if (/Edg\//.test(userAgent)) return 'edge';
  if (/Firefox\//.test(userAgent)) return 'firefox';
  if (/Chrom(e|ium)\//.test(userAgent)) return 'chromium';
  if (/Safari\//.test(userAgent)) return 'safari';
  if (/Node\.js|node/i.test(userAgent)) return 'node';
  return 'other';
}
