/**
 * Side effect: adds `wordle` to the environment registry (imported once by `src/envs/index.ts`).
 */
import { registerEnvironment } from '../registry.js';
import { wordleSpec } from './index.js';

registerEnvironment(wordleSpec);
