/**
 * Side effect: adds `sql` to the environment registry (imported once by `src/envs/index.ts`).
 */
import { registerEnvironment } from '../registry.js';
import { sqlSpec } from './index.js';

registerEnvironment(sqlSpec);
