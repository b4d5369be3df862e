// Paint time, the web-vitals way: the next animation frame, then a task posted from it, which runs
// once the frame has been handed to the compositor.

let channel = null;
const queue = [];

/** Posts a task that runs before timers would (MessageChannel), created on first use. */
function postTask(fn) {
  if (!channel) {
    channel = new MessageChannel();
    channel.port1.onmessage = () => queue.shift()?.();
  }
  queue.push(fn);
  channel.port2.postMessage(0);
}

/** Calls `fn(time)` with the time of the next presented frame; false where there are no frames. */
export function onNextPaint(fn) {
  if (typeof requestAnimationFrame !== 'function') return false;
  requestAnimationFrame(() => postTask(() => fn(performance.now())));
  return true;
}
