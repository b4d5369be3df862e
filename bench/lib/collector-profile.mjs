// CPU accounting and profiles for goals the collector misses: CPU time per process from /proc, and
// perf samples of the release binary itself (it keeps its symbols and unwind tables) or of the
// database server, read back as shares per function.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpuWatch } from './cpu.mjs';

/** CPU seconds a process has used (user + system; Linux counts in ticks of 10 ms). */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Starts CPU accounting over a stretch; `stop()` returns the cores each of `pids` used and the shares
 * of the machine that other processes took and that stayed idle. `server` pids (a database server
 * this process did not spawn, adopted by its backend: `cpu.mjs`) are not counted among the others.
 */
export function machineWatch(pids, server = []) {
  const before = [...pids, ...server].map(cpuSeconds);
  const machine = cpuWatch();
  const t0 = performance.now();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const cores = [...pids, ...server].map((pid, i) => (cpuSeconds(pid) - before[i]) / seconds);
    const serverCores = cores.slice(pids.length).reduce((a, b) => a + b, 0);
    const shares = machine();
    return {
      cores: cores.slice(0, pids.length), serverCores,
      others: shares.others,
      idle: Math.max(0, 1 - shares.ours - shares.others),
    };
  };
}

export function perfAvailable() {
  return spawnSync('perf', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * Samples process `pid` for `seconds` into `file`; resolves when done. Stacks: `dwarf` unwinds them
 * from copies of the stack (299 Hz: costly, for our Rust binary); `fp` follows frame pointers (499
 * Hz: enough for the kernel's side of another program).
 */
export function perfRecord(pid, seconds, file, stacks = 'dwarf') {
  const how = stacks === 'dwarf' ? ['-F', '299', '--call-graph', 'dwarf,16384'] : ['-F', '499', '-g'];
  return new Promise((resolve, reject) => {
    const perf = spawn('perf', ['record', '-q', ...how, '-p', String(pid), '-o', file, '--', 'sleep', String(seconds)], { stdio: 'ignore' });
    perf.on('error', reject);
    perf.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`perf record exited ${code}`))));
  });
}

/**
 * Reads `file` back: per function, its inclusive share ("children": the samples with it anywhere on
 * the stack) and its self share, as fractions of all samples.
 */
export function perfShares(file) {
  const r = spawnSync('perf', ['report', '-i', file, '--children', '--no-inline', '--sort', 'symbol', '-g', 'none', '--stdio', '--percent-limit', '0.2'], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  if (r.status !== 0) throw new Error(`perf report failed: ${r.stderr.slice(0, 300)}`);
  const functions = [];
  for (const line of r.stdout.split('\n')) {
    const m = /^\s+([\d.]+)%\s+([\d.]+)%\s+\[([.k])\]\s+(.+?)\s*$/.exec(line);
    if (m) functions.push({ children: Number(m[1]) / 100, self: Number(m[2]) / 100, kernel: m[3] === 'k', name: m[4].replace(/(\s+-)+$/, '') });
  }
  return { functions };
}

/** The largest inclusive share of a function whose name matches `pattern` (0 when none does). */
export const inclusive = (shares, pattern) => Math.max(0, ...shares.functions.filter((f) => pattern.test(f.name)).map((f) => f.children));

/** The summed self share of the functions matching `pattern`. */
export const selfShare = (shares, pattern) => shares.functions.filter((f) => pattern.test(f.name)).reduce((s, f) => s + f.self, 0);
