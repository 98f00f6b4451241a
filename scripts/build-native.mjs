#!/usr/bin/env node
/**
 * Builds the optional native addon (native/*.c -> native/build/turnwise_blas.node) with
 * the machine's C compiler and Node's own headers. Optional by design: without a compiler or
 * headers it says why and exits 0, and turnwise runs its matmuls on the wasm backend. The addon
 * opens a CBLAS library (OpenBLAS: Debian's libopenblas0-pthread) only when loaded, so building
 * needs no BLAS headers. Plain JS so that `npm install` can run it before anything is compiled.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * Each source with its floating-point flags. `fast`: -ffast-math (the loss head's loop needs it to
 * vectorise expf through libmvec; no NaN/inf reaches it). `exact`: IEEE float32 as tfjs computes,
 * no FMA contraction, no reassociation — kernels that must give the tfjs form's bits (Adam).
 */
const FLAGS = { fast: ['-ffast-math'], exact: ['-fno-fast-math', '-ffp-contract=off', '-fno-math-errno'] };
const units = [
  ['blas.c', 'fast'],
  ['log_softmax.c', 'fast'],
  ['adam.c', 'exact'],
  ['layers.c', 'fast'],
  ['greedy.c', 'fast'],
  ['decode_attention.c', 'fast'],
  ['fma_peak.c', 'fast'],
  ['decode_step.c', 'exact'],
  ['packed.c', 'exact'],
  ['sum_squares.c', 'fast'],
  ['lora.c', 'fast'],
  ['attention.c', 'fast'],
];
const sources = units.map(([f]) => join(root, 'native', f));
const out = join(root, 'native', 'build', 'turnwise_blas.node');
const headers = join(dirname(process.execPath), '..', 'include', 'node');

function skip(why) {
  console.log(`native BLAS addon not built (${why}); matmuls stay on the wasm backend`);
  process.exit(0);
}

if (process.env.TURNWISE_NATIVE_BLAS === 'off') skip('TURNWISE_NATIVE_BLAS=off');
if (!existsSync(join(headers, 'node_api.h'))) skip(`Node headers not found at ${headers}`);
// The script itself too: its flags are part of what was built.
const inputs = [...sources, join(root, 'native', 'napi_arrays.h'), join(root, 'native', 'kernels.h'), fileURLToPath(import.meta.url)];
if (existsSync(out) && inputs.every((f) => statSync(out).mtimeMs >= statSync(f).mtimeMs)) process.exit(0);
mkdirSync(dirname(out), { recursive: true });
const compiler = process.env.CC ?? 'cc';
function cc(args) {
  const run = spawnSync(compiler, args, { encoding: 'utf8' });
  if (run.error !== undefined) skip(`${compiler}: ${run.error.message}`);
  if (run.status !== 0) skip(`${compiler} failed: ${run.stderr.trim().split('\n').slice(-3).join(' ')}`);
}
const objects = units.map(([file, kind]) => {
  const object = join(dirname(out), file.replace(/\.c$/, '.o'));
  cc(['-O3', ...FLAGS[kind], '-Wall', '-fPIC', `-I${headers}`, '-c', join(root, 'native', file), '-o', object]);
  return object;
});
cc(['-shared', ...objects, '-o', out, '-ldl', '-lm']);
for (const object of objects) rmSync(object, { force: true });
console.log(`native BLAS addon built: ${out}`);
