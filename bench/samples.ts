/**
 * Repeated measurements of one figure, for benches on a shared machine (issue #31): each figure is
 * measured a few times, interleaved with the other side's, and printed as its best with the spread
 * (`391 tok/s (3 runs 350-391)`), both per wall-second and per CPU-second of the process (what
 * other processes' load does not inflate).
 */
import { performance } from 'node:perf_hooks';

/** Wall and process CPU seconds of one timed call. */
export interface Timing {
  readonly wall: number;
  readonly cpu: number;
}

/**
 * Times `fn` in wall seconds and in this process's CPU seconds (user + system, all threads).
 * @example const { value, timing } = await timeCall(() => model.step());
 */
export async function timeCall<T>(fn: () => Promise<T> | T): Promise<{ value: T; timing: Timing }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const value = await fn();
  const wall = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return { value, timing: { wall, cpu: (used.user + used.system) / 1e6 } };
}

/** The rates of one figure over repeated runs (per wall-second and per CPU-second). */
export class Rates {
  readonly wall: number[] = [];
  readonly cpu: number[] = [];

  /** Records `work` units done in `timing`. */
  add(work: number, timing: Timing): void {
    this.wall.push(work / timing.wall);
    this.cpu.push(work / Math.max(1e-9, timing.cpu));
  }

  /** Records rates measured elsewhere (the PyTorch child's). */
  addRates(wall: number | undefined, cpu: number | undefined): void {
    if (wall !== undefined && Number.isFinite(wall)) this.wall.push(wall);
    if (cpu !== undefined && Number.isFinite(cpu)) this.cpu.push(cpu);
  }

  /** Best rate per wall-second (NaN before any run). */
  get best(): number {
    return this.wall.length === 0 ? Number.NaN : Math.max(...this.wall);
  }

  /** Best rate per CPU-second (NaN before any run). */
  get bestCpu(): number {
    return this.cpu.length === 0 ? Number.NaN : Math.max(...this.cpu);
  }

  /**
   * `391 tok/s (3 runs 350-391; 402 per CPU-s)`.
   * @example rates.describe('tok/s')
   */
  describe(unit: string): string {
    if (this.wall.length === 0) return 'n/a';
    const n = this.wall.length;
    const spread = n > 1 ? `${n} runs ${fmt(Math.min(...this.wall))}-${fmt(this.best)}; ` : '';
    return `${fmt(this.best)}${unit === '' ? '' : ` ${unit}`} (${spread}${fmt(this.bestCpu)} per CPU-s)`;
  }
}

/** A rate with 3 significant digits, thousands separated. */
export function fmt(x: number): string {
  if (!Number.isFinite(x)) return 'n/a';
  const digits = x >= 100 ? 0 : x >= 10 ? 1 : 2;
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/**
 * `a / b` as `1.23x`, or `n/a`.
 * @example ratio(391, 481) // '0.81x'
 */
export function ratio(a: number, b: number): string {
  return Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}x` : 'n/a';
}
