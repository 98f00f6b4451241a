import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { tf } from '../../src/backend/tf.js';
import { cpuAttention, setCpuAttentionMaxQueries, useCpuAttention } from '../../src/models/transformer/cpu-attention.js';
import { attend, attentionMask } from '../../src/models/transformer/layers.js';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe('cpuAttention', () => {
  it('matches attend() with the additive mask over a padded cache, for every real query', () => {
    const rng = Rng.fromSeed(4);
    const [rows, heads, t, hd, past, cap] = [3, 2, 3, 4, 5, 9];
    const rand = (n: number) => Float32Array.from({ length: n }, () => rng.normal());
    const q = rand(rows * heads * t * hd);
    const keys = rand(rows * heads * cap * hd);
    const values = rand(rows * heads * cap * hd);
    // Row 0: all real; row 1: left-padded past and a pad first query; row 2: a hole in the past.
    const pastMask = Uint8Array.from([1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0]);
    const newMask = Uint8Array.from([1, 1, 1, 0, 1, 1, 1, 1, 1]);
    const got = cpuAttention(q, keys, values, pastMask, newMask, { rows, heads, queries: t, headDim: hd, past, capacity: cap });
    const mask = attentionMask(pastMask, past, newMask, rows, t, cap, cap);
    const want = tf.tidy(() =>
      attend(tf.tensor4d(q, [rows, heads, t, hd]), tf.tensor4d(keys, [rows, heads, cap, hd]), tf.tensor4d(values, [rows, heads, cap, hd]), tf.tensor4d(mask, [rows, 1, t, cap])).dataSync(),
    );
    for (let b = 0; b < rows; b++) {
      for (let i = 0; i < t; i++) {
        if (newMask[b * t + i] === 0) continue; // a pad query's output is never read
        for (let h = 0; h < heads; h++) {
          for (let d = 0; d < hd; d++) {
            const at = ((b * heads + h) * t + i) * hd + d;
            expect(Math.abs((got[at] as number) - (want[at] as number))).toBeLessThan(1e-5);
          }
        }
      }
    }
  });

  it('is used for small decode steps only, and can be turned off', () => {
    expect(useCpuAttention(1, 4, 1, 241, 16)).toBe(true);
    expect(useCpuAttention(64, 4, 1, 241, 16)).toBe(false); // big enough for the tfjs kernels
    expect(useCpuAttention(1, 4, 5, 241, 16)).toBe(false); // a prefill chunk
    setCpuAttentionMaxQueries(0);
    try {
      expect(useCpuAttention(1, 4, 1, 241, 16)).toBe(false);
    } finally {
      setCpuAttentionMaxQueries(4);
    }
    expect(() => setCpuAttentionMaxQueries(-1)).toThrow(/maxQueries/);
  });
});
