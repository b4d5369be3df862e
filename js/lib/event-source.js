// The EventSource hook: a subclass of the page's EventSource that hands each event the app listens
// for to the meter, re-serialized as SSE, so the same decoders see it. An automatic reconnection
// starts a new metered stream; `close()` ends one.

const now = () => performance.now();

export function createEventSourceHook(meter) {
  let restore = null;

  function meterSource(source, url) {
    const open = () => meter.open({ start: now(), url: String(url), dimensions: meter.dimensionsOf({ url: String(url), method: 'GET' }) });
    let control = open();
    const onEvent = (event) => {
      control ??= open();
      const lines = String(event.data).split('\n').map((line) => `data: ${line}\n`).join('');
      control?.stream.chunk(`${event.type === 'message' ? '' : `event: ${event.type}\n`}${lines}\n`);
    };
    const listened = new Set(['message']);
    const add = source.addEventListener;
    const original = { add, close: source.close };
    add.call(source, 'message', onEvent);
    add.call(source, 'open', () => {
      control ??= open();
      control?.stream.response({ status: 200, contentType: 'text/event-stream' });
    });
    add.call(source, 'error', () => {
      // CLOSED: the browser gave up; CONNECTING: it will reconnect, as a new stream.
      control?.finishAfterPaint(source.readyState === 2 ? 'failed' : 'complete');
      control = null;
    });
    // Named events reach only their own listeners: listen to every type the app listens to.
    source.addEventListener = function addEventListener(type, listener, options) {
      if (!listened.has(type) && type !== 'open' && type !== 'error') {
        listened.add(type);
        original.add.call(source, type, onEvent);
      }
      return original.add.call(this, type, listener, options);
    };
    source.close = function close() {
      control?.finishAfterPaint('aborted');
      control = null;
      return original.close.call(this);
    };
  }

  function installEventSource() {
    if (restore) return restore;
    const Original = globalThis.EventSource;
    if (typeof Original !== 'function') return () => {};
    class EventSource extends Original {
      constructor(url, init) {
        super(url, init);
        if (!meter.health.enabled) return;
        try {
          meterSource(this, url);
        } catch (error) {
          meter.health.fail(error);
        }
      }
    }
    globalThis.EventSource = EventSource;
    restore = () => {
      if (globalThis.EventSource === EventSource) globalThis.EventSource = Original;
      restore = null;
    };
    return restore;
  }

  return { installEventSource };
}
