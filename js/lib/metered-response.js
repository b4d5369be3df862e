// A Response whose body passes the app's bytes through the meter: same bytes, same order, read only
// when and as fast as the app reads (a pull source with no queue of its own), cancel passed through to
// the network, and the original's `url`, `type` and `redirected`, which `new Response()` would lose.

export function meteredResponse(response, control) {
  const reader = response.body.getReader();
  const source = {
    async pull(controller) {
      let result;
      try {
        result = await reader.read();
      } catch (error) {
        control.finish(error?.name === 'AbortError' ? 'aborted' : 'failed');
        controller.error(error);
        return;
      }
      if (result.done) {
        control.finishAfterPaint('complete');
        controller.close();
        return;
      }
      control.stream.chunk(result.value);
      controller.enqueue(result.value);
    },
    cancel(reason) {
      control.finish('aborted');
      return reader.cancel(reason);
    },
  };
  // A default stream, not a byte stream: a byte stream costs twice as much per chunk (its enqueue
  // transfers the buffer; BENCHMARKS.md section 1), and apps read fetch bodies with default readers.
  const body = new ReadableStream(source, { highWaterMark: 0 });
  return keepIdentity(new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers }), response);
}

/** Gives `rebuilt` the original's `url`, `type` and `redirected`, on itself and on its clones. */
function keepIdentity(rebuilt, original) {
  for (const key of ['url', 'type', 'redirected']) {
    Object.defineProperty(rebuilt, key, { value: original[key], enumerable: true, configurable: true });
  }
  Object.defineProperty(rebuilt, 'clone', {
    value: function clone() {
      return keepIdentity(Response.prototype.clone.call(this), original);
    },
    configurable: true,
    writable: true,
  });
  return rebuilt;
}
