/**
 * How soon V8 hands a hot JavaScript function to its optimizing compiler (TurboFan), for the
 * `turnwise` process and every worker thread it starts (V8 flags are per process).
 *
 * Why: a training run has seven or more V8 isolates (the main thread, inference and gradient
 * workers), and each compiles the same code on its own; TurboFan's background jobs took ~15 % of
 * the quickstart's CPU (`perf record` by thread), much of it on functions that were only lukewarm.
 * Raising the interrupt budget from V8's 67,584 to 200,000 bytecode-budget units makes a function
 * run ~3x longer in the baseline tiers before it is considered; the hot ones still get optimized.
 * Measured on the quickstart (60 steps, 2-core VM, four interleaved pairs): 31.5–31.9 s against
 * 32.1–34.3 s wall, ~6 % less CPU, the same printed numbers and weights (bench/RESULTS.md). 135,000 did about
 * as well; 300,000 and 400,000 gave nothing (hot code stays slow for too long).
 *
 * A budget given on the command line (`node --interrupt-budget=N`, or in `NODE_OPTIONS`) wins.
 */
import { setFlagsFromString } from 'node:v8';

/** The interrupt budget turnwise sets when the user set none. */
export const TURNWISE_INTERRUPT_BUDGET = 200_000;

/**
 * Sets V8's interrupt budget unless `execArgv` or `nodeOptions` already names one; returns the flag set, or null.
 * @example tuneV8Tiering(process.execArgv, process.env.NODE_OPTIONS) // '--interrupt-budget=200000'
 */
export function tuneV8Tiering(execArgv: readonly string[], nodeOptions: string | undefined): string | null {
  const named = (arg: string) => /^--interrupt[-_]budget(=|$)/.test(arg);
  if (execArgv.some(named) || (nodeOptions ?? '').split(/\s+/).some(named)) return null;
  const flag = `--interrupt-budget=${TURNWISE_INTERRUPT_BUDGET}`;
  setFlagsFromString(flag);
  return flag;
}
