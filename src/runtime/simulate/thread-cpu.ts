/**
 * CPU time of the main thread alone. `process.cpuUsage()` sums every thread of the process — with
 * environments in worker threads it cannot say what the main thread (actors, policy, batching)
 * costs per turn, which is the figure that bounds throughput. Node 20 has no per-thread call, so
 * this reads the kernel's per-thread counters (Linux `/proc/self/task/<pid>/stat`, 10 ms ticks)
 * and answers null elsewhere.
 */
import { readFileSync } from 'node:fs';

/** Clock ticks per second of `/proc` counters (USER_HZ, 100 on every mainstream Linux build). */
const TICKS_PER_SECOND = 100;

/**
 * Seconds of CPU the main thread has used (user + system), or null when the platform cannot say.
 * @example const before = mainThreadCpuSeconds(); work(); const used = (mainThreadCpuSeconds() ?? 0) - (before ?? 0);
 */
export function mainThreadCpuSeconds(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / TICKS_PER_SECOND : null;
  } catch {
    return null;
  }
}
