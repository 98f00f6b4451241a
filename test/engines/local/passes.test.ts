import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineDatum } from '../../../src/engines/engine.js';
import { Rng } from '../../../src/core/rng.js';
import { loadHfModel } from '../../../src/models/hf/hf-model.js';
import { LORA_TARGETS } from '../../../src/models/lora/lora.js';
import type { TransformerModel } from '../../../src/models/transformer/model.js';
import { resolveLoss } from '../../../src/engines/local/losses.js';
import { lossGradients, microBatches, targetLogprobs } from '../../../src/engines/local/passes.js';

const folder = new URL('../../fixtures/tinker-skyrl/model', import.meta.url).pathname;
const S1 = [1, 354, 201, 409, 331, 288, 316, 356, 317, 33, 2, 201, 1, 282, 385, 201, 276, 292, 453, 263, 288, 472, 353, 2, 201];
const datum = (tokens: number[]): EngineDatum => ({
  inputTokens: Int32Array.from(tokens.slice(0, -1)),
  targetTokens: Int32Array.from(tokens.slice(1)),
  weights: new Float32Array(tokens.length - 1).fill(1),
  samplingLogprobs: new Float32Array(tokens.length - 1).fill(-5),
  advantages: Float32Array.from(tokens.slice(1), (id) => (id % 3) - 1),
});
const data = [datum(S1), datum(S1.slice(3, 20)), datum(S1.slice(8)), datum(S1.slice(0, 9))];

let model: TransformerModel;
beforeAll(async () => {
  model = await loadHfModel(folder);
  model.attachLora({ rank: 4, alpha: 32, dropout: 0, targets: [...LORA_TARGETS] }, Rng.fromSeed(3));
});
afterAll(() => model.dispose());

describe('micro-batches of the local engine', () => {
  it('cuts data into consecutive micro-batches within a padded-token budget, a longer datum alone', () => {
    const lengths = (chunks: EngineDatum[][]) => chunks.map((c) => c.map((d) => d.inputTokens.length));
    expect(lengths(microBatches(data, 48))).toEqual([[24, 16], [16, 8]]);
    expect(lengths(microBatches(data, 10))).toEqual([[24], [16], [16], [8]]);
    expect(lengths(microBatches(data, 1000))).toEqual([[24, 16, 16, 8]]);
  });

  it('gives the same log-probs and gradients in micro-batches as in one batch', async () => {
    const loss = resolveLoss('ppo', undefined);
    const whole = lossGradients(model, data, loss, 'sequence-mean', 1_000_000);
    const split = lossGradients(model, data, loss, 'sequence-mean', 10);
    const maxDiff = (a: Float32Array[], b: Float32Array[]) => Math.max(...a.map((x, i) => Math.max(...x.map((v, k) => Math.abs(v - ((b[i] as Float32Array)[k] as number))))));
    expect(maxDiff(whole.logprobs, split.logprobs)).toBeLessThan(1e-6);
    expect(maxDiff(whole.grads, split.grads)).toBeLessThan(1e-6);
    expect(Math.max(...whole.grads.map((g) => Math.max(...g.map(Math.abs))))).toBeGreaterThan(1e-4);
    expect(targetLogprobs(model, data, 10).map((x) => x.length)).toEqual([24, 16, 16, 8]);
  });
});
