/**
 * Chooses the TensorFlow.js backend at run time and says what was chosen, so the CLI can print
 * e.g. `backend: wasm (SIMD, 1 thread; tfjs-node not installed)`.
 *
 * Order for `auto`: native TensorFlow (`@tensorflow/tfjs-node-gpu`, then
 * `@tensorflow/tfjs-node`; optional, loaded only when resolvable because their install needs a
 * libtensorflow download), else wasm (SIMD, one thread in Node, plus the project shims), else the
 * pure-JS cpu backend (≈50x slower; fine for tiny unit tests).
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import { InvalidConfigError } from '../core/errors.js';
import { installWasmShims } from './install-wasm-shims.js';
import { setNativeUse } from './native.js';
import { nativeBlas } from './native-blas.js';
import { tf } from './tf.js';
import { tfWasm } from './tfjs-wasm.js';

/** What a user may ask for. */
export type BackendPreference = 'auto' | 'tensorflow' | 'wasm' | 'cpu';

/** Where the wasm backend's matrix products run (`model.matmul`). */
export type MatmulPreference = 'auto' | 'native' | 'wasm';

/** The backend actually in use. */
export interface BackendInfo {
  /** tfjs backend name. */
  readonly name: 'tensorflow' | 'wasm' | 'cpu';
  /** Whether the kernels use SIMD (wasm: the SIMD binary was loaded; native TF: always). */
  readonly simd: boolean;
  /** Threads a single op may use (wasm in Node: always 1). */
  readonly threads: number;
  /** Why this backend and not a faster one, e.g. `tfjs-node not installed`. */
  readonly note: string;
  /**
   * Where the wasm backend's matrix products run, e.g. `OpenBLAS libopenblas.so.0, 2 threads`
   * or `wasm (native BLAS: addon not built)`; absent on other backends.
   */
  readonly matmul?: string;
}

/** Effects `selectBackend` needs; injected by tests to simulate an installed tfjs-node. */
export interface BackendLoader {
  /** Absolute path of a package's entry, or null when it is not installed. */
  resolve(specifier: string): string | null;
  /** Loads a package for its side effect (registering the `tensorflow` backend). */
  load(specifier: string): Promise<unknown>;
}

/** Options of {@link selectBackend}. */
export interface SelectBackendOptions {
  /** Config path named in errors. Default `runtime.backend`. */
  readonly configPath?: string;
  /** Default: `createRequire(import.meta.url)` resolution and dynamic `import()`. */
  readonly loader?: BackendLoader;
  /** `model.matmul`; default `auto`. */
  readonly matmul?: MatmulPreference;
  /** Config path of `matmul` named in errors. Default `model.matmul`. */
  readonly matmulPath?: string;
}

const NATIVE_PACKAGES = ['@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-node'] as const;
const PREFERENCES: readonly BackendPreference[] = ['auto', 'tensorflow', 'wasm', 'cpu'];
const require = createRequire(import.meta.url);

const defaultLoader: BackendLoader = {
  resolve(specifier) {
    try {
      return require.resolve(specifier);
    } catch {
      return null;
    }
  },
  load: (specifier) => import(specifier),
};

let current: { preference: BackendPreference; matmul: MatmulPreference; info: BackendInfo } | null = null;
let pending: Promise<BackendInfo> | null = null;
let wasmPathsSet = false;

/**
 * Selects (and initialises) the tfjs backend; installs the wasm shims when wasm is chosen.
 * Idempotent: a second call with the same preference returns the same info without
 * re-initialising; concurrent calls share one selection.
 * @throws InvalidConfigError naming `runtime.backend` when an explicit choice is unavailable.
 * @example
 * const info = await selectBackend('auto');
 * console.log(describeBackend(info)); // backend: wasm (SIMD, 1 thread; tfjs-node not installed)
 */
export async function selectBackend(preference: BackendPreference, options: SelectBackendOptions = {}): Promise<BackendInfo> {
  const configPath = options.configPath ?? 'runtime.backend';
  if (!PREFERENCES.includes(preference)) {
    throw new InvalidConfigError(configPath, `expected one of ${PREFERENCES.join(', ')}, got ${JSON.stringify(preference)}`);
  }
  while (pending !== null) await pending.catch(() => undefined);
  const matmul = options.matmul ?? 'auto';
  const matmulPath = options.matmulPath ?? 'model.matmul';
  if (current !== null && current.preference === preference && tf.getBackend() === current.info.name) {
    if (current.matmul === matmul) return current.info;
    // Same backend, another matmul path: switch the path only, no re-initialisation.
    const info = current.info.name === 'wasm' ? { ...current.info, matmul: chooseMatmul(matmul, matmulPath) } : current.info;
    current = { preference, matmul, info };
    return info;
  }
  pending = choose(preference, configPath, options.loader ?? defaultLoader);
  try {
    const chosen = await pending;
    const info = chosen.name === 'wasm' ? { ...chosen, matmul: chooseMatmul(matmul, matmulPath) } : chosen;
    current = { preference, matmul, info };
    return info;
  } finally {
    pending = null;
  }
}

/**
 * One line for logs and the CLI.
 * @example
 * describeBackend({ name: 'wasm', simd: true, threads: 1, note: 'tfjs-node not installed' })
 * // 'backend: wasm (SIMD, 1 thread; tfjs-node not installed)'
 */
export function describeBackend(info: BackendInfo): string {
  const parts = [info.simd ? 'SIMD' : 'no SIMD', `${info.threads} thread${info.threads === 1 ? '' : 's'}`].join(', ');
  return `backend: ${info.name} (${parts}${info.note ? `; ${info.note}` : ''})${info.matmul ? `, matmul: ${info.matmul}` : ''}`;
}

/** Sets the native switch (`native.ts`) for `preference`: `wasm` or no addon → `off`, else `all`; says where products run. */
function chooseMatmul(preference: MatmulPreference, configPath: string): string {
  const MATMULS: readonly MatmulPreference[] = ['auto', 'native', 'wasm'];
  if (!MATMULS.includes(preference)) throw new InvalidConfigError(configPath, `expected one of ${MATMULS.join(', ')}, got ${JSON.stringify(preference)}`);
  if (preference === 'wasm') {
    setNativeUse('off');
    return 'wasm (requested)';
  }
  const { blas, why } = nativeBlas();
  if (blas === null) {
    if (preference === 'native') throw new InvalidConfigError(configPath, `'native' is not available: ${why}; choose 'auto' or 'wasm'`);
    setNativeUse('off');
    return `wasm (native BLAS: ${why})`;
  }
  setNativeUse('all');
  // One BLAS thread unless the user sets OPENBLAS_NUM_THREADS: a run's sampling, environments and
  // gradient workers want the other cores, and idle OpenBLAS threads spin (the quickstart took the
  // same wall time with 2 threads, and 25x the system CPU time).
  if (process.env.OPENBLAS_NUM_THREADS === undefined) blas.setThreads(1);
  const threads = blas.threads();
  const kernels = blas.kernels();
  return `native BLAS ${blas.library}${kernels ? ` (${kernels} kernels)` : ''}, ${threads} thread${threads === 1 ? '' : 's'}`;
}

async function choose(preference: BackendPreference, configPath: string, loader: BackendLoader): Promise<BackendInfo> {
  if (preference === 'cpu') return useCpu('requested');
  if (preference === 'wasm') return useWasm('requested', configPath);
  const native = await tryNative(loader);
  if (native.info !== null) return native.info;
  if (preference === 'tensorflow') {
    throw new InvalidConfigError(
      configPath,
      `'tensorflow' is not available (${native.why}); install @tensorflow/tfjs-node or @tensorflow/tfjs-node-gpu, or choose 'auto', 'wasm' or 'cpu'`,
    );
  }
  try {
    return await useWasm(native.why, configPath);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return useCpu(`${native.why}; wasm failed: ${why}`);
  }
}

async function tryNative(loader: BackendLoader): Promise<{ info: BackendInfo | null; why: string }> {
  const reasons: string[] = [];
  for (const pkg of NATIVE_PACKAGES) {
    const short = pkg.replace('@tensorflow/', '');
    if (loader.resolve(pkg) === null) continue;
    try {
      await loader.load(pkg);
      if (await tf.setBackend('tensorflow')) {
        return { info: { name: 'tensorflow', simd: true, threads: availableParallelism(), note: `via ${short}` }, why: '' };
      }
      reasons.push(`${short} loaded but the 'tensorflow' backend did not initialise`);
    } catch (err) {
      // e.g. installed with --ignore-scripts: its native binding (libtensorflow) is missing.
      reasons.push(`${short} failed to load: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`);
    }
  }
  return { info: null, why: reasons.length > 0 ? reasons.join('; ') : 'tfjs-node not installed' };
}

async function useWasm(note: string, configPath: string): Promise<BackendInfo> {
  if (!wasmPathsSet && !('wasm' in tf.engine().registry)) {
    // Point the loader at the package's own .wasm files so it works from any ESM entry point
    // (and from bundles whose script directory is not node_modules).
    const dir = dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm'));
    tfWasm.setWasmPaths(`${dir}/`);
    wasmPathsSet = true;
  }
  installWasmShims();
  let ok = false;
  try {
    ok = await tf.setBackend('wasm');
  } catch (err) {
    throw new InvalidConfigError(configPath, `'wasm' failed to initialise: ${String(err)}`, { cause: err });
  }
  if (!ok) throw new InvalidConfigError(configPath, `'wasm' failed to initialise (see the tfjs warning above)`);
  const simd = Boolean(await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'));
  return { name: 'wasm', simd, threads: tfWasm.getThreadsCount(), note };
}

async function useCpu(note: string): Promise<BackendInfo> {
  await tf.setBackend('cpu');
  return { name: 'cpu', simd: false, threads: 1, note };
}
