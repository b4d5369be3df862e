// Meters a fetch Response in place: the app gets the original Response (its own url, type, redirected,
// headers and class), whose body stream observes each read where the app does it. A second stream
// around the body would make every chunk cross two streams (BENCHMARKS.md section 1); instead:
//
// - `body.getReader()` returns the real reader, whose `read`, `cancel` and `releaseLock` are patched on
//   that instance: `read` hands the result to the meter as it goes to the app (default and BYOB
//   readers alike; concurrent reads resolve in order, as the real ones do).
// - `for await` and `body.values()` iterate over that reader, as the Streams spec does.
// - `pipeTo`, `pipeThrough` and `tee`, where the runtime reads the body itself, and `text()`, `json()`,
//   `arrayBuffer()`, `blob()`, `bytes()` and `formData()` go through a pull wrapper stream (they pay for
//   stream machinery anyway); when the body is locked or used they are the originals, with their errors.
// - `clone()` tees the body and gives the original a new stream: both Responses are patched, and the
//   meter follows the body the app starts to read first (the other body is not observed).
//
// Everything the meter adds is own properties (not enumerable) on these objects. A body read around
// them (`ReadableStream.prototype.getReader.call(body)`, `new Response(body)`, a transfer to a worker)
// is read as usual but not observed: its stream then ends as aborted (evicted, or when the page goes).
// Any failure inside the meter is counted by `health` and never reaches the app.

import { pullWrapper } from './pull-wrapper.js';
import { readerIterator } from './reader-iterator.js';

const CONSUMERS = ['text', 'json', 'arrayBuffer', 'blob', 'bytes', 'formData'];

export function observeResponse(response, control, health) {
  const safely = (fn) => {
    try {
      fn();
    } catch (error) {
      health.fail(error);
    }
  };
  const tap = {
    read: (result) => safely(() => (result.done ? control.finishAfterPaint('complete') : control.stream.chunk(result.value))),
    failed: (error) => safely(() => control.finish(error?.name === 'AbortError' ? 'aborted' : 'failed')),
    cancelled: () => safely(() => control.finish('aborted')),
  };
  // The meter could not build its wrapper: the body is left as it was, for the app's call unmetered.
  const unwrapped = (error, reader) => {
    health.fail(error);
    reader.releaseLock();
  };
  // The body the app reads first, among the original's and its clones'. None while cloning: a runtime
  // may tee through the body's public methods (Node's undici does).
  let owner = null;
  let cloning = false;
  const claims = (body) => !cloning && (owner ??= body) === body;

  function patchResponse(target) {
    patchBody(target.body);
    for (const method of CONSUMERS) {
      const original = target[method];
      if (typeof original !== 'function') continue;
      define(target, method, named(method, function () {
        const body = this.body;
        if (!body || this.bodyUsed || body.locked || !claims(body)) return original.apply(this, arguments);
        const reader = proto(body).getReader.call(body);
        let rebuilt;
        try {
          rebuilt = new Response(pullWrapper(reader, tap), { headers: this.headers });
        } catch (error) {
          unwrapped(error, reader);
          return original.apply(this, arguments);
        }
        return rebuilt[method]();
      }));
    }
    define(target, 'clone', named('clone', function () {
      const before = this.body;
      cloning = true;
      let copy;
      try {
        copy = proto(this).clone.call(this);
      } finally {
        cloning = false;
      }
      // Cloning needs an unread body: a claim on it (a reader taken and released) moves to the clones.
      if (owner === before) owner = null;
      safely(() => {
        patchBody(this.body);
        patchResponse(copy);
      });
      return copy;
    }));
  }

  function patchBody(body) {
    define(body, 'getReader', named('getReader', function () {
      const reader = proto(this).getReader.apply(this, arguments);
      if (claims(body)) safely(() => patchReader(reader));
      return reader;
    }));
    define(body, 'cancel', named('cancel', function () {
      if (!this.locked && claims(body)) tap.cancelled();
      return proto(this).cancel.apply(this, arguments);
    }));
    for (const name of ['pipeTo', 'pipeThrough', 'tee']) {
      define(body, name, named(name, function () {
        const real = proto(this)[name];
        if (this.locked || !claims(body)) return real.apply(this, arguments);
        const reader = proto(this).getReader.call(this);
        let wrapper;
        try {
          wrapper = pullWrapper(reader, tap, name !== 'tee');
        } catch (error) {
          unwrapped(error, reader);
          return real.apply(this, arguments);
        }
        try {
          return real.apply(wrapper, arguments);
        } finally {
          // Arguments the real method refused: the body is left unlocked, as the real one leaves it.
          if (!wrapper.locked) reader.releaseLock();
        }
      }));
    }
    if (typeof body[Symbol.asyncIterator] === 'function') {
      const values = named('values', function (options) {
        return readerIterator(this.getReader(), Boolean(options?.preventCancel));
      });
      define(body, 'values', values);
      define(body, Symbol.asyncIterator, values);
    }
  }

  function patchReader(reader) {
    const { read, cancel, releaseLock } = reader;
    let released = false;
    const observed = (result) => {
      tap.read(result);
      return result;
    };
    // A read rejected because the app released the reader does not end the stream.
    const failed = (error) => {
      if (!released) tap.failed(error);
      throw error;
    };
    define(reader, 'read', named('read', function () {
      return read.apply(this, arguments).then(observed, failed);
    }));
    define(reader, 'cancel', named('cancel', function () {
      if (!released) tap.cancelled();
      return cancel.apply(this, arguments);
    }));
    define(reader, 'releaseLock', named('releaseLock', function () {
      released = true;
      return releaseLock.apply(this, arguments);
    }));
  }

  patchResponse(response);
}

const proto = (object) => Object.getPrototypeOf(object);

function define(object, key, value) {
  Object.defineProperty(object, key, { value, writable: true, configurable: true });
}

/** `fn` under the name of the method it stands in for. */
function named(name, fn) {
  return Object.defineProperty(fn, 'name', { value: name });
}
