/**
 * Which OpenBLAS kernel family to ask for (`OPENBLAS_CORETYPE`) before the library is opened
 * (issue #31). Why: on AMD Zen 4 (family 25 with AVX-512) OpenBLAS 0.3.21 picks its Cooperlake
 * (AVX-512) kernels, but Zen 4 runs 512-bit operations as two 256-bit halves, and there its Zen
 * (AVX2) kernels are faster: single-threaded sgemm at the SmolLM2-135M decode shapes ([64, 576] x
 * [576, 960 | 1536 | 3072], [64, 1536] x [1536, 576]) ran at 84-92 GFLOP/s against 74-79, at
 * [16, 576] x [576, 1536] 57 against 43, and at training's [256, ...] shapes the same or better
 * (bench/RESULTS.md, "decode-speed"). Other CPUs keep OpenBLAS's own pick.
 */

/**
 * The core type to request for this CPU, or null to leave OpenBLAS's own choice: always null when
 * the user set `OPENBLAS_CORETYPE` (theirs wins).
 * @example openblasCoreType(readFileSync('/proc/cpuinfo', 'utf8'), process.env) // 'Zen' on an EPYC 9004
 */
export function openblasCoreType(cpuinfo: string, env: Readonly<Record<string, string | undefined>>): string | null {
  if (env.OPENBLAS_CORETYPE !== undefined && env.OPENBLAS_CORETYPE !== '') return null;
  const first = cpuinfo.split(/\n\s*\n/)[0] ?? ''; // the first processor's block
  const field = (name: string): string | undefined => new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm').exec(first)?.[1]?.trim();
  const flags = new Set((field('flags') ?? '').split(/\s+/));
  const zen4 = field('vendor_id') === 'AuthenticAMD' && field('cpu family') === '25' && flags.has('avx512f');
  return zen4 ? 'Zen' : null;
}
