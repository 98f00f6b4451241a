/**
 * Side effect: adds `textcraft` to the environment registry (imported once by `src/envs/index.ts`).
 */
import { registerEnvironment } from '../registry.js';
import { textcraftSpec } from './index.js';

registerEnvironment(textcraftSpec);
