/**
 * Side effect: adds `sokoban` to the environment registry (imported once by `src/envs/index.ts`).
 */
import { registerEnvironment } from '../registry.js';
import { sokobanSpec } from './index.js';

registerEnvironment(sokobanSpec);
