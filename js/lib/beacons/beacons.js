// Delivery of stream records to the collection endpoint: batched (count, bytes, time), flushed at once
// when the page is hidden, left or frozen, retried with backoff when the endpoint fails, bounded in
// memory, and kept in localStorage when the page goes before they could be sent.

import { createTransport, EXIT_PAYLOAD_BYTES } from './transport.js';
import { isSampled } from './sampling.js';
import { pageContext } from './page-context.js';
import { sessionIdFor } from './session.js';
import { store, takeStored } from './storage.js';
import { recordUrl } from './record-url.js';
import { withinBounds } from './record-bounds.js';

const ENVELOPE_VERSION = 1;
/** Bounds of what waits for a retry, and of what is kept for the next page load. */
const MAX_QUEUED_RECORDS = 1000;
const MAX_QUEUED_BYTES = 1024 * 1024;
const MAX_STORED_BYTES = 256 * 1024;
const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 60_000;

/**
 * `options`: { endpoint, batch, sampleRate, sessionId, beforeSend, format ('json' | 'otlp'),
 * stripUrlQuery, fetchImpl, toOtlp (the encoder of ./otlp.js, for `format: 'otlp'`), experimentUnitHash
 * (the promise of the experiment unit's hash, of ./experiment-unit.js, when there is one), and from
 * index.js's bundle randomId (../random-id.js) and fields (../report-fields.js) }. `health` contains
 * errors of `beforeSend`.
 */
export function createBeacons(options, health) {
  const { endpoint, beforeSend, fetchImpl, toOtlp, experimentUnitHash, randomId, fields } = options;
  // The app's batch limits over the defaults.
  const { maxRecords, maxBytes, maxDelayMs } = { maxRecords: 50, maxBytes: 16 * 1024, maxDelayMs: 10_000, ...options.batch };
  const otlp = options.format === 'otlp';
  const sampleRate = options.sampleRate ?? 1;
  const sessionId = sessionIdFor(options.sessionId, randomId);
  const sampled = isSampled(sessionId, sampleRate);
  const context = pageContext();
  const transport = createTransport(endpoint, { json: otlp, fetchImpl });
  let pageId = randomId();

  let current = [];
  let currentBytes = 0;
  let timer = null;
  const queue = []; // batches waiting to be sent: { batchId, records, bytes, attempt }
  let inFlight = false;
  let retryTimer = null;
  let failures = 0;
  const waiters = [];
  let sent = 0;
  const dropped = { beforeSend: 0, tooLarge: 0, queueFull: 0, rejected: 0, storageFull: 0, outOfBounds: 0 };
  // The experiment unit's hash comes async: while it is pending, batches wait, so none goes out without it.
  let unit;
  let unitPending = experimentUnitHash?.then((hash) => {
    unit = hash;
    unitPending = null;
    pump();
  });

  const bytesOf = (text) => new TextEncoder().encode(text).length;
  const sizeOf = (value) => bytesOf(JSON.stringify(value));
  /** The sum of `count(batch)` over the queue. */
  const queued = (count) => queue.reduce((n, batch) => n + count(batch), 0);
  const recordsOf = (batch) => batch.records.length;

  function envelope(batch) {
    if (otlp) return JSON.stringify(toOtlp(batch.records, sessionId, pageId));
    return JSON.stringify({
      v: ENVELOPE_VERSION,
      def: batch.records[0]?.def ?? 1,
      sentAt: Date.now(),
      sessionId,
      pageId,
      batchId: batch.batchId,
      retry: batch.attempt,
      sampleRate,
      experimentUnit: unit,
      records: batch.records,
    });
  }

  /** Adds a finished stream's report (if this session is sampled and `beforeSend` keeps it). */
  function add(report) {
    if (!sampled) return;
    let record = { ...report, ...context };
    if (report.url) record.url = recordUrl(report.url, options.stripUrlQuery === false);
    if (beforeSend) {
      record = health.guard(() => beforeSend(record), null);
      if (record == null || record === false) {
        dropped.beforeSend++;
        return;
      }
    }
    if (!inBounds(record)) return;
    const bytes = sizeOf(record);
    if (bytes > EXIT_PAYLOAD_BYTES - 1024) {
      dropped.tooLarge++;
      return;
    }
    if (current.length > 0 && currentBytes + bytes > maxBytes) flushCurrent();
    current.push(record);
    currentBytes += bytes;
    if (current.length >= maxRecords || currentBytes >= maxBytes) flushCurrent();
    else timer ??= setTimeout(flushCurrent, maxDelayMs);
  }

  /** Whether the collector would take `record` (else it would refuse its whole batch); counts a refusal. */
  function inBounds(record) {
    // OTLP endpoints have no such contract.
    if (otlp || withinBounds(record, Date.now(), fields)) return true;
    dropped.outOfBounds++;
    return false;
  }

  /** Moves the current batch to the send queue (and starts sending, unless the page is going). */
  function flushCurrent(send = true) {
    clearTimeout(timer);
    timer = null;
    if (current.length === 0) return;
    enqueue(current, currentBytes);
    current = [];
    currentBytes = 0;
    if (send) pump();
  }

  function enqueue(records, bytes = sizeOf(records)) {
    queue.push({ batchId: randomId(), records, bytes, attempt: 0 });
    // Bounded: past the limits the oldest batches go, and are counted.
    while (queue.length > 1 && (queued((batch) => batch.bytes) > MAX_QUEUED_BYTES || queued(recordsOf) > MAX_QUEUED_RECORDS)) {
      dropped.queueFull += recordsOf(queue.splice(inFlight ? 1 : 0, 1)[0]);
    }
  }

  async function pump() {
    if (inFlight || retryTimer || unitPending || queue.length === 0) return settle();
    inFlight = true;
    const batch = queue[0];
    const result = await transport.send(envelope(batch));
    inFlight = false;
    if (queue[0] !== batch) return pump(); // taken by the exit path meanwhile
    if (typeof result === 'boolean') {
      queue.shift();
      if (result) sent += recordsOf(batch);
      else dropped.rejected += recordsOf(batch);
      failures = 0;
      return pump();
    }
    batch.attempt++;
    // 1 s after the first failure in a row, doubling to the cap, ±20%.
    const backoff = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** failures++) * (0.8 + Math.random() * 0.4);
    retryTimer = setTimeout(retryNow, Math.max(backoff, result));
  }

  function retryNow() {
    clearTimeout(retryTimer);
    retryTimer = null;
    pump();
  }

  function settle() {
    if (queue.length === 0 && current.length === 0 && !inFlight) waiters.splice(0).forEach((resolve) => resolve());
  }

  /** The page may be going: hand everything to the browser now, and keep what it would not take. */
  function exit() {
    flushCurrent(false);
    // A failing endpoint would fail these too, and there is no retry on exit: keep them all for later;
    // as well while the experiment unit is still unknown.
    let budget = failures > 0 || unitPending ? 0 : EXIT_PAYLOAD_BYTES;
    const leftover = [];
    for (const batch of queue.splice(0)) {
      for (const records of pieces(batch.records)) {
        const body = envelope({ ...batch, batchId: randomId(), records });
        const bytes = bytesOf(body);
        if (bytes <= budget && transport.sendOnExit(body)) {
          budget -= bytes;
          sent += records.length;
        } else {
          leftover.push(...records);
        }
      }
    }
    dropped.storageFull += store(leftover, MAX_STORED_BYTES);
    settle();
  }

  /** Splits records into payloads under the exit quota (1 KiB of each for the envelope). */
  function pieces(records) {
    const out = [];
    let piece;
    let bytes = Infinity;
    for (const record of records) {
      const size = sizeOf(record) + 1;
      if (bytes + size > EXIT_PAYLOAD_BYTES) {
        out.push((piece = []));
        bytes = 1024;
      }
      piece.push(record);
      bytes += size;
    }
    return out;
  }

  // What the previous page could not send goes first, less what has grown too old meanwhile.
  const stored = takeStored().filter(inBounds);
  for (let i = 0; i < stored.length; i += maxRecords) enqueue(stored.slice(i, i + maxRecords));
  pump();

  return {
    add,
    exit,
    /** The endpoint may be back (the browser went online): retry at once. */
    wake() {
      if (retryTimer) retryNow();
    },
    /** A new page visit (restored from the back/forward cache). */
    newPage() {
      pageId = randomId();
    },
    /** Sends everything now; resolves when nothing is left to send. */
    flush() {
      flushCurrent();
      const done = new Promise((resolve) => waiters.push(resolve));
      settle();
      return done;
    },
    stats: () => ({ sent, dropped: { ...dropped }, queued: queued(recordsOf) + current.length, sampled, sessionId }),
  };
}
