import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import type { TrainBatch } from '../../src/models/train-batch.js';
import { tinyModel } from './transformer-fixtures.js';

// The allocation-light training step (issue #10): dense targets skip the gather, and on wasm
// tf.clone (how tfjs saves inputs for backprop) shares data instead of copying it.

beforeAll(async () => {
  await selectBackend('wasm');
});

/** Every position of a [2, 6] batch a target (as in pre-training or the scale bench). */
function denseBatch(order: 'forward' | 'reversed'): TrainBatch {
  const rng = Rng.fromSeed(4);
  const n = 12;
  const inputIds = Int32Array.from({ length: n }, () => 6 + rng.int(34));
  const targets = Int32Array.from({ length: n }, () => 6 + rng.int(34));
  const positions = Int32Array.from({ length: n }, (_, i) => (order === 'forward' ? i : n - 1 - i));
  return {
    batchSize: 2,
    seqLen: 6,
    inputIds,
    attentionMask: new Uint8Array(n).fill(1),
    targetPositions: positions,
    targetIds: Int32Array.from(positions, (p) => targets[p]),
    allowedOffsets: null,
    allowedIds: null,
  };
}

describe('fused training step', () => {
  it('gives the same log-probs and gradients for dense targets as the gathered path', () => {
    const model = tinyModel(3);
    const run = (order: 'forward' | 'reversed') =>
      tf.tidy(() => {
        const batch = denseBatch(order);
        const { value, grads } = tf.variableGrads(() => {
          const { logprobs, entropy } = model.forwardTrain(batch, 1);
          // Position-dependent weights, so a mis-ordered row would change the loss.
          const w = tf.tensor1d(Float32Array.from(batch.targetPositions, (p) => 1 + p));
          return tf.add(tf.sum(tf.mul(logprobs, w)), tf.sum(entropy)) as tf.Scalar;
        }, model.trainableVariables());
        return { loss: value.dataSync()[0], grads: Object.values(grads).map((g) => Array.from(g.dataSync())) };
      });
    const dense = run('forward'); // targets 0..11 in order: no gather
    const gathered = run('reversed'); // the same targets through tf.gather
    expect(dense.loss).toBeCloseTo(gathered.loss, 4);
    let diff = 0;
    dense.grads.forEach((g, i) => {
      for (let j = 0; j < g.length; j++) diff = Math.max(diff, Math.abs(g[j] - gathered.grads[i][j]));
    });
    expect(diff).toBeLessThan(1e-5);
    model.dispose();
  });

  it('clones on wasm without copying (one data buffer, freed with the last reference)', () => {
    const backend = tf.engine().backend;
    const before = backend.numDataIds();
    const x = tf.tensor1d([1, 2, 3]);
    const y = tf.clone(x);
    expect(backend.numDataIds()).toBe(before + 1);
    x.dispose();
    expect(Array.from(y.dataSync())).toEqual([1, 2, 3]);
    y.dispose();
    expect(backend.numDataIds()).toBe(before);
  });
});
