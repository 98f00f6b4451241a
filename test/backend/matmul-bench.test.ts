import { describe, expect, it } from 'vitest';
import { DEFAULT_MATMUL_BENCH_SHAPES, measureMatmulGflops } from '../../bench/matmul-gflops.js';
import { tf } from '../../src/backend/tf.js';

describe('measureMatmulGflops', () => {
  it('measures stock and shim GFLOP/s per shape and restores the previous backend', async () => {
    await tf.setBackend('cpu');
    const shapes = [DEFAULT_MATMUL_BENCH_SHAPES[0], { a: [16, 16], b: [16, 16] }];
    const results = await measureMatmulGflops(shapes, { minMs: 20 });
    expect(tf.getBackend()).toBe('cpu');
    expect(results.map((r) => r.label)).toEqual(['[8,128,64]x[8,64,128] NT', '[16,16]x[16,16] NN']);
    expect(results[0].flopsPerCall).toBe(2 * 8 * 128 * 128 * 64);
    expect(results[0].rerouted).toBe(true);
    expect(results[1].rerouted).toBe(false);
    for (const r of results) {
      expect(r.stockGflops).toBeGreaterThan(0);
      expect(r.shimGflops).toBeGreaterThan(0);
      expect(r.speedup).toBeCloseTo(r.shimGflops / r.stockGflops);
    }
  });
});
