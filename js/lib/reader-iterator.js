// An async iterator over a stream reader, as ReadableStream's own `values()` is (Streams spec):
// calls run one after another, `return()` cancels the stream unless `preventCancel`, and the lock is
// released when the iteration ends. The meter's body uses it so that `for await` reads go through its
// observed reader, not the runtime's internal one.

export function readerIterator(reader, preventCancel) {
  let ongoing = null;
  let finished = false;
  const nextSteps = async () => {
    if (finished) return { value: undefined, done: true };
    let result;
    try {
      result = await reader.read();
    } catch (error) {
      finished = true;
      reader.releaseLock();
      throw error;
    }
    if (result.done) {
      finished = true;
      reader.releaseLock();
    }
    return result;
  };
  const returnSteps = async (value) => {
    if (finished) return { value, done: true };
    finished = true;
    if (preventCancel) {
      reader.releaseLock();
    } else {
      const cancelled = reader.cancel(value);
      reader.releaseLock();
      await cancelled;
    }
    return { value, done: true };
  };
  const queue = (steps) => (ongoing = ongoing ? ongoing.then(steps, steps) : steps());
  return {
    next: () => queue(nextSteps),
    return: (value) => queue(() => returnSteps(value)),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
