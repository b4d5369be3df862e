// The EventSource hook: a subclass of the page's EventSource that hands each event the app listens
// for to the meter, re-serialized as SSE, so the same decoders see it. An automatic reconnection
// starts a new metered stream; `close()` ends one.

import { globalHook } from './global-hook.js';

/** The installer of the hook (see global-hook.js). */
export function eventSourceHook(meter) {
  function meterSource(source, url) {
    url = String(url);
    let control = null;
    const open = () => (control ??= meter.open({ start: performance.now(), url, dimensions: meter.dimensionsOf({ url, method: 'GET' }) }));
    const end = (ending) => {
      control?.finishAfterPaint(ending);
      control = null;
    };
    const onEvent = (event) => {
      const type = event.type === 'message' ? '' : `event: ${event.type}\n`;
      open()?.stream.chunk(`${type}data: ${String(event.data).replaceAll('\n', '\ndata: ')}\n\n`);
    };
    const { addEventListener: add, close: closeSource } = source;
    // Types with a listener of the meter's own (named events reach only their own listeners).
    const listened = new Set(['message', 'open', 'error']);
    open();
    add.call(source, 'message', onEvent);
    add.call(source, 'open', () => open()?.stream.response({ status: 200, contentType: 'text/event-stream' }));
    // CLOSED: the browser gave up; CONNECTING: it will reconnect, as a new stream.
    add.call(source, 'error', () => end(source.readyState === 2 ? 'failed' : 'complete'));
    source.addEventListener = function addEventListener(type) {
      if (!listened.has(type)) {
        listened.add(type);
        add.call(source, type, onEvent);
      }
      return Reflect.apply(add, this, arguments);
    };
    source.close = function close() {
      end('aborted');
      return closeSource.call(this);
    };
  }

  return globalHook('EventSource', (Original) => class EventSource extends Original {
    constructor(url, init) {
      super(url, init);
      meter.health.guard(meterSource, undefined, this, url);
    }
  });
}
