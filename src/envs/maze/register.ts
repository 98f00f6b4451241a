/**
 * Side effect: adds `maze` to the environment registry (imported once by `src/envs/index.ts`).
 */
import { registerEnvironment } from '../registry.js';
import { mazeSpec } from './index.js';

registerEnvironment(mazeSpec);
