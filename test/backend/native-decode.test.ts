import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { nativeBlas } from '../../src/backend/native-blas.js';
import { setNativeUse } from '../../src/backend/native.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import { cpuAttention, cpuAttentionJs, setCpuAttentionMaxQueries, useCpuAttention } from '../../src/models/transformer/cpu-attention.js';
import { greedyPrefix, greedyPrefixJs } from '../../src/models/transformer/greedy-prefix.js';
import { greedyToken } from '../../src/models/transformer/sampling.js';
import { type TransformerConfig, TransformerModel } from '../../src/models/transformer/model.js';
import { maxRelDiff, randomArray } from './fixtures.js';

// The decode-step kernels of native/greedy.c and native/decode_attention.c (issue #20): each gives
// what its JS form gives (which the other tests hold to the tfjs forms), within float rounding,
// and a model's decode steps give the same logits through them as through tfjs attention.

const { blas } = nativeBlas();

describe('greedyPrefix', () => {
  it('is greedyToken over ids [0, count): same id, log-prob and entropy (JS form)', () => {
    const rng = Rng.fromSeed(2);
    for (const [v, count] of [
      [50, 50],
      [50, 37],
      [1, 1],
    ] as const) {
      const logits = Float32Array.from({ length: v }, () => rng.normal() * 4);
      const want = greedyToken(logits, Int32Array.from({ length: count }, (_, i) => i));
      const got = greedyPrefixJs(logits, count);
      expect(got.tokenId).toBe(want.tokenId);
      expect(got.logprob).toBeCloseTo(want.logprob, 10);
      expect(got.entropy).toBeCloseTo(want.entropy, 10);
    }
  });

  it('breaks ties to the lower id and ignores ids at or past count', () => {
    expect(greedyPrefixJs(new Float32Array([1, 3, 3, 9]), 3).tokenId).toBe(1);
    expect(greedyPrefix(new Float32Array([1, 3, 3, 9]), 3).tokenId).toBe(1);
    expect(greedyPrefix(new Float32Array([1, 3, 3, 9]), 4).tokenId).toBe(3);
  });
});

describe.runIf(blas !== null)('native decode kernels (wasm backend)', () => {
  beforeAll(async () => {
    await selectBackend('wasm', { matmul: 'native' });
  });

  it('greedyRows gives the JS form within float32 rounding, at a real vocabulary size', () => {
    const rng = Rng.fromSeed(5);
    const v = 49152;
    for (let trial = 0; trial < 4; trial++) {
      const logits = Float32Array.from({ length: v }, () => rng.normal() * (trial + 1));
      if (trial === 3) logits[777] = logits[778] = 50; // a tie at the top
      const count = trial === 2 ? 40000 : v;
      const want = greedyPrefixJs(logits, count);
      const got = greedyPrefix(logits, count);
      expect(got.tokenId).toBe(want.tokenId);
      expect(Math.abs(got.logprob - want.logprob)).toBeLessThan(1e-5 * Math.max(1, Math.abs(want.logprob)));
      expect(Math.abs(got.entropy - want.entropy)).toBeLessThan(1e-5 * Math.max(1, want.entropy));
    }
    expect(greedyPrefix(new Float32Array([0, 5, 5]), 3).tokenId).toBe(1);
  });

  it('decodeAttention gives cpuAttentionJs: grouped heads, padded and holed caches, several queries, a query that sees nothing', () => {
    const rng = Rng.fromSeed(4);
    for (const [rows, heads, kvHeads, t, hd, past, cap] of [
      [3, 9, 3, 1, 64, 20, 24], // SmolLM2's grouping and head size (the unrolled kernel)
      [3, 4, 2, 3, 16, 5, 9], // any head size, several new queries
      [2, 2, 2, 4, 8, 0, 6], // no cached slots
    ] as const) {
      const rand = (n: number) => Float32Array.from({ length: n }, () => rng.normal() * 2);
      const q = rand(rows * heads * t * hd);
      const keys = rand(rows * kvHeads * cap * hd);
      const values = rand(rows * kvHeads * cap * hd);
      // Row 0 all real, row 1 left-padded with its first new token a pad (sees nothing when past is 0), row 2 a hole.
      const pastMask = Uint8Array.from({ length: rows * cap }, (_, i) => {
        const [r, j] = [Math.floor(i / cap), i % cap];
        return j < past && !(r === 1 && j < 3) && !(r === 2 && j === 1) ? 1 : 0;
      });
      const newMask = Uint8Array.from({ length: rows * t }, (_, i) => (i === t && t > 1 ? 0 : 1));
      const shape = { rows, heads, kvHeads, queries: t, headDim: hd, past, capacity: cap };
      const got = cpuAttention(q, keys, values, pastMask, newMask, shape);
      const want = cpuAttentionJs(q, keys, values, pastMask, newMask, shape, new Float32Array(q.length));
      expect(maxRelDiff(got, want)).toBeLessThan(1e-5);
    }
  });

  it('is used for decode steps of any batch size on wasm, and not with the native kernels off', () => {
    expect(useCpuAttention(64, 9, 1, 200, 64)).toBe(true);
    expect(useCpuAttention(64, 9, 5, 200, 64)).toBe(false); // a prefill chunk
    setNativeUse('matmul');
    try {
      expect(useCpuAttention(64, 9, 1, 200, 64)).toBe(false);
    } finally {
      setNativeUse('all');
    }
  });

  it("gives a model's decode-step logits within 1e-5 of tfjs attention over the uploaded cache", () => {
    const config: TransformerConfig = { vocabSize: 64, dModel: 48, nLayers: 2, nHeads: 6, nKvHeads: 2, ffnHidden: 40, maxContext: 64, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: true };
    const model = new TransformerModel(config, Rng.fromSeed(3));
    const rng = Rng.fromSeed(9);
    const [rows, prompt] = [5, 7];
    const mask = Uint8Array.from({ length: rows * prompt }, (_, i) => (i >= prompt && i % prompt < 2 ? 0 : 1)); // rows 1.. left-padded
    const ids = Int32Array.from({ length: rows * prompt }, () => rng.int(config.vocabSize));
    const run = (maxQueries: number) => {
      setCpuAttentionMaxQueries(maxQueries);
      try {
        const cache = model.createCache(rows, prompt + 4);
        tf.dispose(model.extend(cache, ids, mask, prompt));
        const out: Float32Array[] = [];
        for (let step = 0; step < 3; step++) {
          const logits = model.extend(cache, Int32Array.from({ length: rows }, (_, r) => (r * 7 + step) % config.vocabSize), new Uint8Array(rows).fill(1), 1);
          out.push((logits.dataSync() as Float32Array).slice());
          logits.dispose();
        }
        return out;
      } finally {
        setCpuAttentionMaxQueries(4);
      }
    };
    const native = run(4);
    const reference = run(0); // every step through tfjs attention (the cache uploaded)
    native.forEach((got, step) => {
      expect(maxRelDiff(got, reference[step] as Float32Array), `step ${step}`).toBeLessThan(1e-5);
    });
    model.dispose();
  });

  it('keeps greedy decoding through TransformerPolicy the same with the native kernels off', async () => {
    const { TransformerPolicy } = await import('../../src/models/transformer-policy.js');
    const config: TransformerConfig = { vocabSize: 80, dModel: 32, nLayers: 2, nHeads: 4, nKvHeads: 2, ffnHidden: 40, maxContext: 64, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: true };
    const model = new TransformerModel(config, Rng.fromSeed(6));
    const requests = [0, 1, 2].map((r) => ({ contextTokens: Int32Array.from(randomArray(5 + r, r + 1), (x) => Math.floor((x + 1) * 39)), actionChoices: null }));
    const decode = async (native: boolean) => {
      setNativeUse(native ? 'all' : 'matmul');
      try {
        return await new TransformerPolicy(model, { endTokenId: 79, reuseCaches: false }).greedyActions(requests, 6);
      } finally {
        setNativeUse('all');
      }
    };
    const got = await decode(true);
    const want = await decode(false);
    got.forEach((result, i) => {
      const reference = want[i] as (typeof want)[number];
      expect(Array.from(result.tokens)).toEqual(Array.from(reference.tokens));
      result.logprobs.forEach((lp, j) => {
        expect(Math.abs(lp - (reference.logprobs[j] as number))).toBeLessThan(1e-4);
      });
    });
    model.dispose();
  });
});
