#!/usr/bin/env node
/**
 * Builds the optional native addon (native/*.c -> native/build/turnwise_blas.node) with
 * the machine's C compiler and Node's own headers. Optional by design: without a compiler or
 * headers it says why and exits 0, and turnwise runs its matmuls on the wasm backend. The addon
 * opens a CBLAS library (OpenBLAS: Debian's libopenblas0-pthread) only when loaded, so building
 * needs no BLAS headers. Plain JS so that `npm install` can run it before anything is compiled.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const sources = ['blas.c', 'log_softmax.c'].map((f) => join(root, 'native', f));
const out = join(root, 'native', 'build', 'turnwise_blas.node');
const headers = join(dirname(process.execPath), '..', 'include', 'node');

function skip(why) {
  console.log(`native BLAS addon not built (${why}); matmuls stay on the wasm backend`);
  process.exit(0);
}

if (process.env.TURNWISE_NATIVE_BLAS === 'off') skip('TURNWISE_NATIVE_BLAS=off');
if (!existsSync(join(headers, 'node_api.h'))) skip(`Node headers not found at ${headers}`);
const inputs = [...sources, join(root, 'native', 'napi_arrays.h')];
if (existsSync(out) && inputs.every((f) => statSync(out).mtimeMs >= statSync(f).mtimeMs)) process.exit(0);
mkdirSync(dirname(out), { recursive: true });
const compiler = process.env.CC ?? 'cc';
const args = ['-O3', '-ffast-math', '-Wall', '-shared', '-fPIC', `-I${headers}`, ...sources, '-o', out, '-ldl', '-lm'];
const run = spawnSync(compiler, args, { encoding: 'utf8' });
if (run.error !== undefined) skip(`${compiler}: ${run.error.message}`);
if (run.status !== 0) skip(`${compiler} failed: ${run.stderr.trim().split('\n').slice(-3).join(' ')}`);
console.log(`native BLAS addon built: ${out}`);
