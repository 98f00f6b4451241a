/**
 * The tfjs wasm backend package (it registers the `wasm` backend and its kernels when loaded),
 * loaded with `require` for the reason `tf.ts` gives: an ES `import` of this CommonJS package
 * would make Node lex its source for export names in every thread.
 */
import { createRequire } from 'node:module';
import type * as TfWasm from '@tensorflow/tfjs-backend-wasm';

const require = createRequire(import.meta.url);

/** `@tensorflow/tfjs-backend-wasm`'s exports. */
export const tfWasm = require('@tensorflow/tfjs-backend-wasm') as typeof TfWasm;
