/**
 * The one place turnwise imports TensorFlow.js from. Everything else does
 * `import { tf } from './tf.js'` so that the package choice (full `@tensorflow/tfjs`,
 * needed because the core-only ESM build cannot register gradients from Node) is made once.
 */
import * as tf from '@tensorflow/tfjs';

// Why: the cpu backend prints a "Hi, looks like you are running TensorFlow.js in Node.js" banner
// on its first tensor write. We report the backend ourselves (select.ts), so mark the cpu backend
// as already used. This is narrower than `tf.enableProdMode()`, which would hide every tfjs
// warning. `firstUse` is a tfjs-backend-cpu 4.22.0 internal; if it disappears this is a no-op.
const cpuBackend = tf.findBackend('cpu') as unknown as { firstUse?: boolean } | null;
if (cpuBackend !== null && typeof cpuBackend.firstUse === 'boolean') cpuBackend.firstUse = false;

export { tf };
