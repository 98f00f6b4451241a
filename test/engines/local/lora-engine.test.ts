import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineDatum } from '../../../src/engines/engine.js';
import { readPeftAdapter } from '../../../src/engines/local/checkpoint-files.js';
import { LocalLoraBase } from '../../../src/engines/local/lora-base.js';
import { GRAD_NORM_METRIC, LocalLoraEngine } from '../../../src/engines/local/lora-engine.js';
import { adamWStep, initialAdamWState } from '../../../src/engines/local/optax-adamw.js';
import { CheckpointError } from '../../../src/core/errors.js';

const folder = new URL('../../fixtures/tinker-skyrl/model', import.meta.url).pathname;
const S1 = [1, 354, 201, 409, 331, 288, 316, 356, 317, 33, 2, 201, 1, 282, 385, 201, 276, 292, 453, 263, 288, 472, 353, 2, 201];
const datum = (tokens: number[], weight = 1): EngineDatum => ({ inputTokens: Int32Array.from(tokens.slice(0, -1)), targetTokens: Int32Array.from(tokens.slice(1)), weights: new Float32Array(tokens.length - 1).fill(weight) });
const adam = { learningRate: 0.01, beta1: 0.9, beta2: 0.95, eps: 1e-12, weightDecay: 0, gradClipNorm: 0 };
const maxDiff = (a: Map<string, { data: Float32Array }>, b: Map<string, { data: Float32Array }>) => Math.max(...[...a].map(([k, w]) => Math.max(...w.data.map((x, i) => Math.abs(x - (b.get(k)!.data[i] as number))))));

let sum: LocalLoraBase;
let mean: LocalLoraBase;
beforeAll(async () => {
  sum = await LocalLoraBase.load(folder, { reduction: 'sum' });
  mean = await LocalLoraBase.load(folder, { reduction: 'sequence-mean' });
});
afterAll(() => {
  sum.close();
  mean.close();
});

async function trainedWith(base: LocalLoraBase, calls: EngineDatum[][]) {
  const engine = await LocalLoraEngine.create(base, { rank: 4, seed: 5 });
  // a first step gives B non-zero values, so the second step's gradient reaches every matrix
  await engine.forwardBackward([datum(S1)], 'cross_entropy');
  await engine.optimStep(adam);
  for (const data of calls) await engine.forwardBackward(data, 'cross_entropy');
  const { metrics } = await engine.optimStep(adam);
  const weights = engine.adapterWeights();
  await engine.close();
  return { weights, gradNorm: metrics[GRAD_NORM_METRIC] as number };
}

describe('the local LoRA engine', () => {
  it('accumulates forward_backward calls until optim_step: two calls of one datum step as one call of two', async () => {
    const a = datum(S1.slice(0, 12));
    const b = datum(S1.slice(5));
    for (const base of [sum, mean]) {
      const split = await trainedWith(base, [[a], [b]]);
      const joint = await trainedWith(base, [[a, b]]);
      expect(Math.abs(split.gradNorm - joint.gradNorm)).toBeLessThan(1e-5);
      expect(maxDiff(split.weights, joint.weights)).toBeLessThan(1e-6);
    }
  });

  it('sums token losses under sum, and normalises each sequence by its weight sum under sequence-mean', async () => {
    const once = (await trainedWith(sum, [[datum(S1)]])).gradNorm;
    expect((await trainedWith(sum, [[datum(S1, 2)]])).gradNorm).toBeCloseTo(2 * once, 4);
    const normalised = (await trainedWith(mean, [[datum(S1)]])).gradNorm;
    expect((await trainedWith(mean, [[datum(S1, 2)]])).gradNorm).toBeCloseTo(normalised, 5);
    expect(normalised).toBeCloseTo(once / (S1.length - 1), 4);
  });

  it('samples with the stop id kept, sample i from seed + i, and refuses a prompt past the context', async () => {
    const engine = await LocalLoraEngine.create(sum, { rank: 2 });
    const req = { promptTokens: Int32Array.from(S1.slice(0, 16)), numSamples: 3, maxTokens: 8, temperature: 1, topP: 0.9, topK: 50, stopTokenIds: [2], seed: 40 };
    const [three] = await engine.sample('base', [req]);
    const [third] = await engine.sample('base', [{ ...req, numSamples: 1, seed: 42 }]);
    expect(Array.from(third!.sequences[0]!.tokens)).toEqual(Array.from(three!.sequences[2]!.tokens));
    const [greedy] = await engine.sample('base', [{ ...req, numSamples: 1, temperature: 0, maxTokens: 8, stopTokenIds: [197] }]);
    expect(Array.from(greedy!.sequences[0]!.tokens)).toEqual([33, 488, 488, 197]);
    expect(greedy!.sequences[0]!.stopReason).toBe('stop');
    await expect(engine.sample('base', [{ ...req, maxTokens: 100_000 }])).rejects.toThrow(/sampling_params\.max_tokens/);
    await engine.close();
  });

  it('refuses an adapter whose tied lora_A copies differ', async () => {
    const tied = await LocalLoraBase.load(folder, { sharedA: true, maxLoraRank: 8 });
    const adapter = await readPeftAdapter(new URL('../../fixtures/tinker-skyrl/sampler-adapter', import.meta.url).pathname);
    const name = 'base_model.model.model.layers.0.self_attn.k_proj.lora_A.weight';
    const changed = new Map(adapter.weights);
    changed.set(name, { shape: adapter.weights.get(name)!.shape, data: adapter.weights.get(name)!.data.map((x) => x + 1) });
    expect(() => tied.adapterModel(tied.loraSpec(8), 0, changed)).toThrow(CheckpointError);
    const model = tied.adapterModel(tied.loraSpec(8), 0, adapter.weights);
    // per layer: one A for q/k/v, one for gate/up, o's and down's own, and 7 B: 2 x 11 (28 untied)
    expect(model.trainableVariables()).toHaveLength(22);
    model.dispose();
    tied.close();
  });
});

describe('optax-style AdamW', () => {
  it('takes the bias-corrected step with eps outside the root, decoupled decay and global-norm clipping', () => {
    const p = [Float32Array.of(1, -2)];
    const state = initialAdamWState([2]);
    const norm = adamWStep(p, [Float32Array.of(3, 4)], state, { learningRate: 0.1, beta1: 0.9, beta2: 0.95, eps: 1e-12, weightDecay: 0.5, gradClipNorm: 1 });
    expect(norm).toBeCloseTo(5, 6);
    // clipped g = (0.6, 0.8); at t = 1 m_hat = g and v_hat = g^2, so the update is sign(g) + wd * p
    expect(p[0]![0]).toBeCloseTo(1 - 0.1 * (1 + 0.5 * 1), 6);
    expect(p[0]![1]).toBeCloseTo(-2 - 0.1 * (1 + 0.5 * -2), 6);
    expect(state.step).toBe(1);
    expect(() => adamWStep(p, [Float32Array.of(0, 0)], state, { learningRate: 0.1, beta1: 1, beta2: 0.95, eps: 0, weightDecay: 0, gradClipNorm: 0 })).toThrow(/adam_params\.beta1/);
  });
});
