// CPU accounting from /proc (Linux): how much of the machine other processes used during a stretch
// of the bench (this Node process and its descendants, Chromium included, are "ours", and so are the
// servers the bench started detached, once adopted).
import { readFileSync, readdirSync } from 'node:fs';

const adopted = new Set();
/** Ticks of adopted processes that were released (stopped): kept, or they would vanish from the sum. */
let banked = 0;

/** Counts `pid` and its descendants as the bench's own from now on (a database server it started). */
export function adopt(pid) {
  adopted.add(pid);
}

/**
 * Call just before stopping an adopted `pid`: its ticks so far (and its descendants') stay counted
 * as the bench's, since a stopped daemon that no one of ours reaps leaves no trace in /proc.
 */
export function release(pid) {
  if (!adopted.delete(pid)) return;
  banked += ticksUnder(new Set([pid]));
}

function machineTicks() {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number);
  return { busy: user + nice + system + irq + softirq, total: user + nice + system + idle + iowait + irq + softirq + steal, steal };
}

/** CPU ticks of this process, the adopted ones and all their descendants, live or reaped. */
function ourTicks() {
  return banked + ticksUnder(new Set([process.pid, ...adopted]));
}

/** CPU ticks of the processes in `roots` and all their descendants, live or reaped. */
function ticksUnder(roots) {
  const parent = new Map();
  const ticks = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(name), Number(rest[1]));
      // utime + stime, plus cutime + cstime: the times of children it has reaped (a closed page's
      // renderer, say), which would otherwise vanish from the sum when they exit.
      ticks.set(Number(name), Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14]));
    } catch {
      // The process ended meanwhile.
    }
  }
  const ours = (pid) => {
    for (let p = pid, hops = 0; p > 1 && hops < 64; p = parent.get(p) ?? 0, hops++) if (roots.has(p)) return true;
    return false;
  };
  let sum = 0;
  for (const [pid, t] of ticks) if (ours(pid)) sum += t;
  return sum;
}

/** Starts a measurement; `stop()` returns { others, ours, steal } as shares of the whole machine (all cores). */
export function cpuWatch() {
  try {
    const m0 = machineTicks();
    const o0 = ourTicks();
    return () => {
      const m1 = machineTicks();
      const o1 = ourTicks();
      const total = m1.total - m0.total;
      // Process times come in 10 ms ticks: a window under 0.1 s (on 2 cores) says nothing.
      if (total < 20) return { others: NaN, ours: NaN, steal: NaN };
      const ours = Math.min(1, Math.max(0, (o1 - o0) / total));
      return { others: Math.min(1, Math.max(0, (m1.busy - m0.busy) / total - ours)), ours, steal: (m1.steal - m0.steal) / total };
    };
  } catch {
    return () => ({ others: NaN, ours: NaN, steal: NaN });
  }
}

/** Waits (at most `maxMs`) until other processes use under `threshold` of the machine over one second. */
export async function waitForQuiet(maxMs = 30_000, threshold = 0.1) {
  const end = Date.now() + maxMs;
  let last = null;
  do {
    const stop = cpuWatch();
    await new Promise((r) => setTimeout(r, 1000));
    last = stop();
    if (!(last.others >= threshold)) return { quiet: true, waitedMs: maxMs - (end - Date.now()), others: last.others };
  } while (Date.now() < end);
  return { quiet: false, waitedMs: maxMs, others: last.others };
}
