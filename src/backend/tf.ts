/**
 * The one place turnwise imports TensorFlow.js from. Everything else does
 * `import { tf } from './tf.js'` so that the package choice (full `@tensorflow/tfjs`,
 * needed because the core-only ESM build cannot register gradients from Node) is made once.
 *
 * Loaded with `require`, not `import`: `@tensorflow/tfjs` is CommonJS, and an ES `import` of a
 * CommonJS package makes Node lex its source, and that of every package it re-exports, for their
 * export names, in every isolate (the main thread and each worker thread). Measured on a 2-core
 * VM: ~0.2 s wall and ~0.4 s of CPU more per isolate than `require`, about 3 CPU-seconds at the
 * start of a quickstart run with its seven isolates (bench/RESULTS.md). It is the same module
 * instance either way: Node keeps one copy of a CommonJS module per thread.
 */
import { createRequire } from 'node:module';
import type * as Tf from '@tensorflow/tfjs';

const require = createRequire(import.meta.url);
const tf = require('@tensorflow/tfjs') as typeof Tf;

/** The tfjs types the code names as `tf.X` (a value and a namespace of types share the name `tf`). */
declare namespace tf {
  export type Rank = Tf.Rank;
  export type Tensor<R extends Tf.Rank = Tf.Rank> = Tf.Tensor<R>;
  export type Scalar = Tf.Scalar;
  export type Tensor1D = Tf.Tensor1D;
  export type Tensor2D = Tf.Tensor2D;
  export type Tensor3D = Tf.Tensor3D;
  export type Tensor4D = Tf.Tensor4D;
  export type Variable<R extends Tf.Rank = Tf.Rank> = Tf.Variable<R>;
  export type TensorInfo = Tf.TensorInfo;
  export type TensorContainer = Tf.TensorContainer;
  export type NamedAttrMap = Tf.NamedAttrMap;
  export type KernelFunc = Tf.KernelFunc;
  export type GradSaveFunc = Tf.GradSaveFunc;
  export type AdamOptimizer = Tf.AdamOptimizer;
}

// Why: the cpu backend prints a "Hi, looks like you are running TensorFlow.js in Node.js" banner
// on its first tensor write. We report the backend ourselves (select.ts), so mark the cpu backend
// as already used. This is narrower than `tf.enableProdMode()`, which would hide every tfjs
// warning. `firstUse` is a tfjs-backend-cpu 4.22.0 internal; if it disappears this is a no-op.
const cpuBackend = tf.findBackend('cpu') as unknown as { firstUse?: boolean } | null;
if (cpuBackend !== null && typeof cpuBackend.firstUse === 'boolean') cpuBackend.firstUse = false;

export { tf };
