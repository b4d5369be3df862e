// The demo in one process: the collector (the real binary, on SQLite), the scripted LLM API (every
// provider format, model profiles fast/slow/jittery/stalling/buffered) and the chat page www/chat/, which
// meters its own streams and sends the beacons to the collector. `npm start` runs it; the simulation and
// the end-to-end test start it on free ports.
//
// The LLM API serves LLM_CAPACITY streams at once at full speed and slows beyond, as a real one does
// under load (scripts/scripted-llm-server.mjs): as many as the simulation's pages at once by default, so
// only its peaks (`npm run simulate -- --peak N`) exceed it.
//
//   node scripts/demo.mjs [--chat-port 8080] [--llm-port 8081] [--collector-port 8787] [--llm-capacity 6] [--db data/beacons.db]
//   import { startDemo } from './demo.mjs';  const demo = await startDemo({ db });  demo.chatUrl; await demo.close();
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { serveStatic } from './serve.mjs';
import { startScriptedServer } from './scripted-llm-server.mjs';
import { startCollector, ROOT } from './collector.mjs';

/** The ports `npm start` uses; www/chat/chat.js assumes the LLM and collector ones when its URL names none. */
export const DEFAULT_PORTS = { chat: 8080, llm: 8081, collector: 8787 };
/** The streams the demo's LLM API serves at once at full speed. */
export const LLM_CAPACITY = 6;

/**
 * The chat page's address: the LLM API and the collector go in the query string, unless they are where
 * the page looks by default (so `npm start` prints the plain address).
 */
export function chatPageUrl(chatOrigin, llmUrl, collectorUrl) {
  const url = new URL('/www/chat/', chatOrigin);
  if (llmUrl !== `${url.protocol}//${url.hostname}:${DEFAULT_PORTS.llm}`) url.searchParams.set('llm', llmUrl);
  if (collectorUrl !== `http://127.0.0.1:${DEFAULT_PORTS.collector}`) url.searchParams.set('collector', collectorUrl);
  return url.href;
}

/**
 * Starts the three servers on loopback (port 0: a free one). The collector takes beacons from the chat
 * page's origin only (as 127.0.0.1 or localhost). Resolves { chatUrl, llmUrl, collectorUrl, collector, llm, close() }.
 */
export async function startDemo({ chatPort = 0, llmPort = 0, collectorPort = 0, llmCapacity = LLM_CAPACITY, db } = {}) {
  const opened = [];
  const close = () => Promise.all(opened.map((stop) => stop()));
  try {
    const site = await serveStatic(ROOT, chatPort);
    opened.push(() => new Promise((done) => { site.close(() => done()); site.closeAllConnections(); }));
    const chatOrigin = `http://127.0.0.1:${site.address().port}`;
    const llm = await startScriptedServer({ port: llmPort, capacity: llmCapacity });
    opened.push(() => llm.close());
    // Whichever name the user types for the page: 127.0.0.1 or localhost.
    const origins = [chatOrigin, chatOrigin.replace('127.0.0.1', 'localhost')].flatMap((origin) => ['--allow-origin', origin]);
    const collector = await startCollector({ db, listen: `127.0.0.1:${collectorPort}`, args: origins });
    opened.push(() => collector.close());
    return { chatUrl: chatPageUrl(chatOrigin, llm.url, collector.url), llmUrl: llm.url, collectorUrl: collector.url, collector, llm, close };
  } catch (error) {
    await close();
    throw error;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      'chat-port': { type: 'string', default: String(DEFAULT_PORTS.chat) },
      'llm-port': { type: 'string', default: String(DEFAULT_PORTS.llm) },
      'collector-port': { type: 'string', default: String(DEFAULT_PORTS.collector) },
      'llm-capacity': { type: 'string', default: String(LLM_CAPACITY) },
      db: { type: 'string', default: 'data/beacons.db' },
    },
  });
  const demo = await startDemo({
    chatPort: Number(values['chat-port']), llmPort: Number(values['llm-port']), collectorPort: Number(values['collector-port']),
    llmCapacity: Number(values['llm-capacity']), db: values.db,
  });
  console.log(`scripted LLM API (OpenAI, Anthropic, Gemini, Ollama, AI SDK formats; ${values['llm-capacity']} streams at full speed): ${demo.llmUrl}/  beacons: ${values.db}`);
  console.log(`chat: ${demo.chatUrl}  dashboard: ${demo.collectorUrl}/`);
  console.log('Ctrl-C stops everything');
  let stopping = false;
  const stop = async (code) => {
    if (stopping) return;
    stopping = true;
    await demo.close();
    process.exit(code);
  };
  process.on('SIGINT', () => stop(0));
  process.on('SIGTERM', () => stop(0));
  demo.collector.process.once('exit', (code, signal) => {
    if (stopping) return;
    console.error(`demo: the collector stopped (${signal ?? `exit ${code}`}); stopping the demo`);
    stop(1);
  });
}
