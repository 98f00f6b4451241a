/**
 * Side effect: adds `frozenlake` to the environment registry (imported once by `src/envs/index.ts`).
 */
import { registerEnvironment } from '../registry.js';
import { frozenLakeSpec } from './index.js';

registerEnvironment(frozenLakeSpec);
