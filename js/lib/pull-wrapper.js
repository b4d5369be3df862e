// A stream that hands out what `reader` reads, observed by `tap`, for the paths where the runtime reads
// a body itself (pipes, tee, Response consumers): same bytes, read only when and as fast as the consumer
// pulls (no queue of its own), cancel passed through to the network. `releaseAtEnd`: once the body is
// closed, errored or cancelled, release it, as a pipe does with the stream it read.

export function pullWrapper(reader, tap, releaseAtEnd = false) {
  const end = () => {
    if (releaseAtEnd) reader.releaseLock();
  };
  const source = {
    async pull(controller) {
      let result;
      try {
        result = await reader.read();
      } catch (error) {
        tap.failed(error);
        end();
        controller.error(error);
        return;
      }
      tap.read(result);
      if (result.done) {
        end();
        controller.close();
      } else {
        controller.enqueue(result.value);
      }
    },
    cancel(reason) {
      tap.cancelled();
      const cancelled = reader.cancel(reason);
      end();
      return cancelled;
    },
  };
  // A default stream, not a byte stream: a byte stream costs twice as much per chunk (its enqueue
  // transfers the buffer; BENCHMARKS.md section 1).
  return new ReadableStream(source, { highWaterMark: 0 });
}
