// Starts the release collector (scripts/collector.mjs, already built) for a measurement. The
// launcher's URL match can run on half of the start-up line when stderr arrives in two chunks (seen
// under load: "http://127", and every request then went elsewhere), so the URL is read again here
// from the complete line.
import { startCollector } from '../../scripts/collector.mjs';

export async function launchCollector(args) {
  const collector = await startCollector({ args, build: false });
  let m;
  while (!(m = /listening on (http:\/\/\S+) /.exec(collector.output()))) await new Promise((r) => setTimeout(r, 10));
  return { ...collector, url: m[1] };
}
