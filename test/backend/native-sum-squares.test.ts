import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { globalNormScale } from '../../src/algorithms/grad-clip.js';
import { nativeBlas } from '../../src/backend/native-blas.js';
import { nativeSumSquares } from '../../src/backend/native-sum-squares.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';

// native/sum_squares.c: the global gradient norm's sum of squares in one pass, in double. It must
// agree with the exact sum (double over the same floats) and with the tfjs form to float32 rounding.

const { blas } = nativeBlas();

describe.runIf(blas !== null)('nativeSumSquares (wasm backend)', () => {
  beforeAll(async () => {
    await selectBackend('wasm', { matmul: 'native' });
  });

  it('sums the squares of every value of every tensor, as a double loop does', () => {
    const rng = Rng.fromSeed(7);
    const shapes = [[257], [33, 65], [3, 5, 7], [1]];
    const grads = shapes.map((s) => tf.tensor(Float32Array.from({ length: s.reduce((a, b) => a * b, 1) }, () => rng.normal()), s));
    let want = 0;
    for (const g of grads) for (const x of g.dataSync()) want += x * x;
    const got = nativeSumSquares(grads);
    expect(got).not.toBeNull();
    expect(Math.abs((got as number) - want) / want).toBeLessThan(1e-12);
    const tfjs = tf.tidy(() => tf.sqrt(tf.addN(grads.map((g) => tf.sum(tf.square(g))))).dataSync()[0] as number);
    const { norm } = globalNormScale(grads, 1);
    expect(norm).toBe(Math.sqrt(got as number));
    expect(Math.abs(norm - tfjs) / tfjs).toBeLessThan(1e-6);
    tf.dispose(grads);
  });

  it('gives a non-finite norm (and scale 1) for a NaN or infinite gradient, and refuses int tensors', () => {
    const nan = [tf.tensor1d([Number.NaN, 1]), tf.tensor1d([2])];
    expect(globalNormScale(nan, 1)).toEqual({ norm: Number.NaN, scale: 1 });
    const inf = [tf.tensor1d([Number.POSITIVE_INFINITY])];
    expect(globalNormScale(inf, 1)).toEqual({ norm: Number.POSITIVE_INFINITY, scale: 1 });
    const ints = [tf.tensor1d([1, 2], 'int32')];
    expect(nativeSumSquares(ints)).toBeNull();
    tf.dispose([...nan, ...inf, ...ints]);
  });
});
