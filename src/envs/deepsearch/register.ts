/**
 * Side effect: adds `deepsearch` to the environment registry (imported once by `src/envs/index.ts`).
 */
import { registerEnvironment } from '../registry.js';
import { deepsearchSpec } from './index.js';

registerEnvironment(deepsearchSpec);
