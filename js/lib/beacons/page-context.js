// Context read once per page and put on every record: network type and RTT, device memory, cores,
// and a coarse browser family. Coarse on purpose: enough to split results, too little to identify.

export function pageContext() {
  const nav = typeof navigator === 'undefined' ? {} : navigator;
  const connection = nav.connection ?? {};
  return {
    connection: typeof connection.effectiveType === 'string' ? connection.effectiveType : null,
    rttMs: Number.isFinite(connection.rtt) ? connection.rtt : null,
    deviceMemoryGb: Number.isFinite(nav.deviceMemory) ? nav.deviceMemory : null,
    cores: Number.isFinite(nav.hardwareConcurrency) ? nav.hardwareConcurrency : null,
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
