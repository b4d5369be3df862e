// Starts the release collector (scripts/collector.mjs, already built) for a measurement, guarding
// against two faults of that launcher seen under load:
// - its URL match can run on half of the start-up line when stderr arrives in two chunks
//   ("http://127"), so the URL is read again here from the complete line;
// - with --exit-with-stdin, SIGTERM alone leaves the collector waiting for its stdin to close, so
//   closing ends stdin first.
import { startCollector } from '../../scripts/collector.mjs';

export async function launchCollector(args) {
  const collector = await startCollector({ args, build: false });
  let m;
  while (!(m = /listening on (http:\/\/\S+) /.exec(collector.output()))) await new Promise((r) => setTimeout(r, 10));
  return {
    ...collector,
    url: m[1],
    close: () => {
      collector.process.stdin?.end();
      return collector.close();
    },
  };
}
