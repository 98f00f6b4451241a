import { beforeAll, describe, expect, it } from 'vitest';
import { clipByGlobalNorm, globalNormScale } from '../../src/algorithms/grad-clip.js';
import { tf } from '../../src/backend/tf.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe('clipByGlobalNorm', () => {
  it('scales gradients down to the max norm and leaves smaller ones alone', () => {
    const grads = [tf.tensor1d([3, 0]), tf.tensor2d([[0, 4]])]; // global norm 5
    const { clipped, norm } = clipByGlobalNorm(grads, 1);
    expect(norm).toBeCloseTo(5, 6);
    const total = Math.hypot(...clipped.flatMap((g) => Array.from(g.dataSync())));
    expect(total).toBeLessThanOrEqual(1);
    expect(total).toBeCloseTo(1, 5);
    const loose = clipByGlobalNorm(grads, 10);
    expect(Array.from(loose.clipped[1].dataSync())).toEqual([0, 4]);
    tf.dispose([...grads, ...clipped, ...loose.clipped]);
  });

  it('gives the same norm and factor without the copies (globalNormScale), and scale 1 for a non-finite norm', () => {
    const grads = [tf.tensor1d([3, 0]), tf.tensor2d([[0, 4]])];
    const { norm, scale } = globalNormScale(grads, 1);
    const { clipped } = clipByGlobalNorm(grads, 1);
    expect(norm).toBeCloseTo(5, 6);
    expect(Array.from(clipped[1].dataSync())).toEqual(Array.from(tf.mul(grads[1], scale).dataSync()));
    expect(globalNormScale(grads, 10).scale).toBe(1);
    const bad = [tf.tensor1d([Number.NaN, 1])];
    expect(globalNormScale(bad, 1)).toEqual({ norm: Number.NaN, scale: 1 });
    tf.dispose([...grads, ...clipped, ...bad]);
  });
});
