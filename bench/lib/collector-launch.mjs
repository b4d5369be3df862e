// Starts the release collector (scripts/collector.mjs, already built) for a measurement. The
// launcher's URL match can run on half of the start-up line when stderr arrives in two chunks (seen
// under load: "http://127", and every request then went elsewhere), so the URL is read again here
// from the complete line.
import { startCollector } from '../../scripts/collector.mjs';

export async function launchCollector(args) {
  // Query timings loop on /api/* from one address: no per-client analytics rate limit for them.
  const collector = await startCollector({ args: ['--api-rate-limit', '0', ...args], build: false });
  let m;
  while (!(m = /listening on (http:\/\/\S+) /.exec(collector.output()))) await new Promise((r) => setTimeout(r, 10));
  return { ...collector, url: m[1] };
}
