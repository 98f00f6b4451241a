/**
 * NumPy's random stream (SeedSequence -> PCG64 -> Generator), bit-exact, for environments that
 * must draw what a Python original draws (Minigrid's BabyAI levels).
 */
export { NumpyGenerator } from './generator.js';
export { Pcg64 } from './pcg64.js';
export { generateState, seedSequencePool, seedWords } from './seed-sequence.js';
