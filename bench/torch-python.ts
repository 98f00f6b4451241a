/**
 * Which PyTorch the benches compare with (issue #31). Every bench that runs a PyTorch side takes
 * its interpreter from `TORCH_PYTHON` (e.g. a venv with torch 2.13: the version a researcher uses
 * today), else Debian's `/usr/bin/python3` (python3-torch 1.13), else `python3` on the PATH, and
 * prints which version ran. A PyTorch 1.x is older than what the goals are stated against; the
 * benches then also print a proxy bar (1.13 x {@link TORCH1_TO_2_MARGIN}, the margin issue #20
 * measured between 1.13 and 2.13 on these shapes) and say so. With 2.x there is no proxy.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** How much faster PyTorch 2.13 was than Debian's 1.13 on the training shapes (issue #20: 1.2-1.4x). */
export const TORCH1_TO_2_MARGIN = 1.3;

/** The interpreter the PyTorch sides run with, and the torch it imports. */
export interface TorchPython {
  /** The interpreter's path or name. */
  readonly python: string;
  /** Where it came from: `TORCH_PYTHON`, Debian's, or the PATH. */
  readonly from: 'TORCH_PYTHON' | '/usr/bin/python3' | 'PATH';
  /** `torch.__version__`, or null when torch does not import. */
  readonly version: string | null;
  /** Why torch does not import (empty when it does). */
  readonly why: string;
}

let cached: TorchPython | null = null;

/**
 * The PyTorch interpreter for this run (probed once).
 * @example const t = torchPython(); console.log(describeTorch(t)); // 'PyTorch 2.13.0+cpu (TORCH_PYTHON=/work/venv-torch/bin/python)'
 */
export function torchPython(): TorchPython {
  if (cached !== null) return cached;
  const given = process.env.TORCH_PYTHON;
  const [python, from]: [string, TorchPython['from']] =
    given !== undefined && given !== '' ? [given, 'TORCH_PYTHON'] : existsSync('/usr/bin/python3') ? ['/usr/bin/python3', '/usr/bin/python3'] : ['python3', 'PATH'];
  const probe = spawnSync(python, ['-c', 'import torch; print(torch.__version__)'], { encoding: 'utf8' });
  const version = probe.status === 0 ? probe.stdout.trim().split('\n').pop() ?? null : null;
  const why = version !== null ? '' : probe.error !== undefined ? probe.error.message : probe.stderr.trim().split('\n').pop() ?? `exit ${probe.status}`;
  cached = { python, from, version, why };
  return cached;
}

/**
 * Whether the torch is a current one (2.x or later): no proxy bar then.
 * @example torchIsCurrent({ ...t, version: '2.13.0+cpu' }) // true
 */
export function torchIsCurrent(t: TorchPython): boolean {
  const major = Number.parseInt(t.version ?? '0', 10);
  return major >= 2;
}

/**
 * One line naming the PyTorch that ran and where it came from, or how to get one.
 * @example describeTorch(torchPython()) // 'PyTorch 1.13.0a0 (/usr/bin/python3; set TORCH_PYTHON to a PyTorch 2.x interpreter to compare with a current one)'
 */
export function describeTorch(t: TorchPython): string {
  if (t.version === null) {
    return `no PyTorch (${t.python}: ${t.why}); apt-get install -y python3-torch libopenblas0-pthread, or set TORCH_PYTHON to an interpreter with torch`;
  }
  const where = t.from === 'TORCH_PYTHON' ? `TORCH_PYTHON=${t.python}` : t.python;
  return torchIsCurrent(t)
    ? `PyTorch ${t.version} (${where})`
    : `PyTorch ${t.version} (${where}; older than the 2.x the goals are stated against: set TORCH_PYTHON to a PyTorch 2.x interpreter)`;
}

/**
 * The environment of a PyTorch child with `threads` threads: every BLAS and OpenMP pool sized alike
 * (OpenBLAS for Debian's torch, MKL and OpenMP for the pip wheels).
 * @example spawnSync(t.python, args, { env: torchEnv(1) })
 */
export function torchEnv(threads: number): NodeJS.ProcessEnv {
  const n = String(threads);
  return { ...process.env, OPENBLAS_NUM_THREADS: n, OMP_NUM_THREADS: n, MKL_NUM_THREADS: n };
}
