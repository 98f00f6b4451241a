import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointError, InvalidArgumentError, InvalidConfigError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { tf } from '../../src/backend/tf.js';
import { KvCache } from '../../src/models/kv-cache.js';
import type { TransformerModel } from '../../src/models/transformer/model.js';
import { fromHfConfig } from '../../src/models/hf/hf-config.js';
import { completeConfig } from '../../src/models/transformer/config.js';
import { packBatch, randomSeq, TINY, tinyModel } from './transformer-fixtures.js';

let model: TransformerModel;

beforeAll(async () => {
  await tf.setBackend('cpu');
  model = tinyModel(1);
});
afterAll(() => model.dispose());

function logitsOf(m: TransformerModel, ids: Int32Array): Float32Array {
  const t = m.forwardLogits(ids, new Uint8Array(ids.length).fill(1), 1, ids.length);
  const out = t.dataSync() as Float32Array;
  t.dispose();
  return out;
}

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

describe('TransformerModel weights', () => {
  it('uses Hugging Face Llama names and layouts', () => {
    const w = model.namedWeights();
    expect(w.get('model.embed_tokens.weight')?.shape).toEqual([40, 16]);
    expect(w.get('model.layers.1.self_attn.o_proj.weight')?.shape).toEqual([16, 16]);
    expect(w.get('model.layers.0.mlp.gate_proj.weight')?.shape).toEqual([44, 16]);
    expect(w.get('model.layers.0.mlp.down_proj.weight')?.shape).toEqual([16, 44]);
    expect(w.get('model.layers.0.input_layernorm.weight')?.shape).toEqual([16]);
    expect(w.get('model.layers.0.post_attention_layernorm.weight')?.data.every((x) => x === 1)).toBe(true);
    expect(w.get('model.norm.weight')?.shape).toEqual([16]);
    expect(w.get('lm_head.weight')?.shape).toEqual([40, 16]);
    expect(w.size).toBe(1 + 2 * 9 + 2);
    expect(model.trainableVariables().length).toBe(w.size);
    expect(model.parameterCount).toBe([...w.values()].reduce((n, x) => n + x.data.length, 0));
  });

  it('initialises N(0, 0.02), output projections scaled by 1/sqrt(2 nLayers)', () => {
    const big = tinyModel(3, { dModel: 64, nHeads: 4, ffnHidden: 172, nLayers: 2 });
    const w = big.namedWeights();
    const std = (x: Float32Array) => Math.sqrt(x.reduce((s, v) => s + v * v, 0) / x.length);
    expect(std(w.get('model.layers.0.mlp.up_proj.weight')!.data)).toBeCloseTo(0.02, 3);
    expect(std(w.get('model.layers.0.mlp.down_proj.weight')!.data)).toBeCloseTo(0.01, 3);
    big.dispose();
  });

  it('is deterministic for a seed and different across seeds', () => {
    const a = tinyModel(7);
    const b = tinyModel(7);
    const c = tinyModel(8);
    const ids = randomSeq(Rng.fromSeed(0), 9);
    expect(maxDiff(logitsOf(a, ids), logitsOf(b, ids))).toBe(0);
    expect(maxDiff(logitsOf(a, ids), logitsOf(c, ids))).toBeGreaterThan(1e-4);
    for (const m of [a, b, c]) m.dispose();
  });

  it('reproduces identical logits after loadNamedWeights(namedWeights())', () => {
    const other = tinyModel(99);
    other.loadNamedWeights(model.namedWeights());
    const ids = randomSeq(Rng.fromSeed(1), 12);
    expect(maxDiff(logitsOf(model, ids), logitsOf(other, ids))).toBe(0);
    other.dispose();
  });

  it('names the tensor on a shape mismatch, a missing or an unknown tensor', () => {
    const w = model.namedWeights();
    const bad = new Map(w);
    bad.set('model.layers.0.self_attn.q_proj.weight', { shape: [16, 8], data: new Float32Array(128) });
    expect(() => model.loadNamedWeights(bad)).toThrow(CheckpointError);
    expect(() => model.loadNamedWeights(bad)).toThrow(/q_proj.*shape mismatch/);
    const missing = new Map(w);
    missing.delete('model.norm.weight');
    expect(() => model.loadNamedWeights(missing)).toThrow(/model\.norm\.weight.*missing/);
    const extra = new Map(w);
    extra.set('model.layers.5.mlp.up_proj.weight', { shape: [1], data: new Float32Array(1) });
    expect(() => model.loadNamedWeights(extra)).toThrow(/layers\.5.*unknown/);
  });

  it('ties the head to the embedding when asked (no lm_head.weight)', () => {
    const tied = tinyModel(2, { tieEmbeddings: true });
    expect(tied.namedWeights().has('lm_head.weight')).toBe(false);
    expect(tied.toHfConfig().tie_word_embeddings).toBe(true);
    tied.dispose();
  });

  it('writes a Llama config.json', () => {
    expect(model.toHfConfig()).toMatchObject({
      architectures: ['LlamaForCausalLM'],
      hidden_size: 16,
      num_hidden_layers: 2,
      num_attention_heads: 2,
      intermediate_size: 44,
      vocab_size: 40,
      max_position_embeddings: 64,
      rope_theta: 10000,
      rms_norm_eps: 1e-5,
      tie_word_embeddings: false,
    });
  });

  it('reads its own config.json back', () => {
    expect(fromHfConfig({ ...model.toHfConfig() })).toEqual(completeConfig(TINY));
    expect(() => fromHfConfig({ ...model.toHfConfig(), num_key_value_heads: 3 })).toThrow(/num_key_value_heads/);
  });

  it('frees every tensor it made on dispose, after training and packed/padded sampling too', () => {
    const before = tf.memory().numTensors;
    tinyModel(3).dispose();
    expect(tf.memory().numTensors).toBe(before);
    const m = tinyModel(4, { tieEmbeddings: true });
    const ids = randomSeq(Rng.fromSeed(4), 6);
    logitsOf(m, ids);
    // The packed path keeps fused q/k/v weights per layer: dispose must free them too.
    tf.dispose([m.extendPacked([m.createCache(1, 8)], [ids]), m.extend(m.createCache(1, 8), ids, new Uint8Array(6).fill(1), 6)]);
    m.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });

  it('rejects a bad config naming the field', () => {
    expect(() => tinyModel(0, { nHeads: 3 })).toThrow(InvalidConfigError);
    expect(() => tinyModel(0, { dModel: 0 })).toThrow(/model\.dModel/);
  });
});

describe('TransformerModel forward', () => {
  it('is causal: changing a later token leaves earlier logits unchanged', () => {
    const ids = randomSeq(Rng.fromSeed(2), 10);
    const changed = Int32Array.from(ids);
    changed[7] = ids[7] === 10 ? 11 : 10;
    const a = logitsOf(model, ids);
    const b = logitsOf(model, changed);
    const v = TINY.vocabSize;
    expect(maxDiff(a.subarray(0, 7 * v), b.subarray(0, 7 * v))).toBe(0);
    expect(maxDiff(a.subarray(7 * v), b.subarray(7 * v))).toBeGreaterThan(1e-6);
  });

  it('gives the same training logprobs for a sequence alone and inside a padded batch', () => {
    const rng = Rng.fromSeed(3);
    const s = { ids: randomSeq(rng, 8), positions: [3, 4, 5, 6] };
    const longer = { ids: randomSeq(rng, 14), positions: [10, 12] };
    const alone = model.forwardTrain(packBatch([s]), 1);
    const batched = model.forwardTrain(packBatch([longer, s, longer], 16), 1);
    const a = alone.logprobs.dataSync();
    const b = batched.logprobs.dataSync().slice(2, 6);
    expect(maxDiff(a, b)).toBeLessThan(1e-5);
    expect(maxDiff(alone.entropy.dataSync(), batched.entropy.dataSync().slice(2, 6))).toBeLessThan(1e-5);
    tf.dispose([alone.logprobs, alone.entropy, batched.logprobs, batched.entropy]);
  });

  it('scores targets with log_softmax(logits / T) and its entropy', () => {
    const ids = randomSeq(Rng.fromSeed(4), 6);
    const logits = logitsOf(model, ids);
    const v = TINY.vocabSize;
    const out = model.forwardTrain(packBatch([{ ids, positions: [2, 4] }]), 0.5);
    const lp = out.logprobs.dataSync();
    const ent = out.entropy.dataSync();
    [2, 4].forEach((p, k) => {
      const row = Array.from(logits.subarray(p * v, (p + 1) * v), (x) => x / 0.5);
      const max = Math.max(...row);
      const lse = max + Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0));
      expect(lp[k]).toBeCloseTo(row[ids[p + 1]] - lse, 5);
      const h = -row.reduce((s, x) => s + Math.exp(x - lse) * (x - lse), 0);
      expect(ent[k]).toBeCloseTo(h, 5);
    });
    tf.dispose([out.logprobs, out.entropy]);
  });

  it('applies the allowed-set constraint; a single allowed id scores 0, empty ranges are free', () => {
    const ids = randomSeq(Rng.fromSeed(5), 6);
    const allowed = [[ids[2], 7], [ids[3]], []];
    const free = model.forwardTrain(packBatch([{ ids, positions: [1, 2, 3] }]), 1);
    const out = model.forwardTrain(packBatch([{ ids, positions: [1, 2, 3], allowed }]), 1);
    const f = free.logprobs.dataSync();
    const c = out.logprobs.dataSync();
    expect(c[0]).toBeGreaterThan(f[0]);
    expect(c[1]).toBe(0);
    expect(out.entropy.dataSync()[1]).toBeCloseTo(0, 6);
    expect(c[2]).toBeCloseTo(f[2], 6);
    tf.dispose([free.logprobs, free.entropy, out.logprobs, out.entropy]);
  });

  it.each([false, true])('gives finite gradients for every variable inside tf.variableGrads, without leaking (tied: %s)', (tied) => {
    const m = tied ? tinyModel(4, { tieEmbeddings: true }) : model;
    const rng = Rng.fromSeed(6);
    const batch = packBatch([
      { ids: randomSeq(rng, 9), positions: [5, 6, 7], allowed: [[8, 9, 10], [], [11]] },
      { ids: randomSeq(rng, 5), positions: [2, 3] },
    ]);
    const before = tf.memory().numTensors;
    const { value, grads } = tf.variableGrads(() => {
      const { logprobs, entropy } = m.forwardTrain(batch, 1);
      return tf.neg(tf.add(tf.mean(logprobs), tf.mul(0.01, tf.mean(entropy)))) as tf.Scalar;
    }, m.trainableVariables());
    const names = Object.keys(grads);
    expect(names.length).toBe(m.trainableVariables().length);
    for (const g of Object.values(grads)) expect(g.dataSync().every(Number.isFinite)).toBe(true);
    const embedGrad = grads[m.trainableVariables()[0].name].dataSync();
    expect(embedGrad.some((x) => x !== 0)).toBe(true);
    expect(Number.isFinite(value.dataSync()[0])).toBe(true);
    tf.dispose([value, ...Object.values(grads)]);
    expect(tf.memory().numTensors).toBe(before);
    if (tied) m.dispose();
  });

  it('rejects a malformed batch naming the field', () => {
    const batch = packBatch([{ ids: randomSeq(Rng.fromSeed(7), 5), positions: [1] }]);
    expect(() => model.forwardTrain({ ...batch, targetPositions: new Int32Array([9]) }, 1)).toThrow(/batch\.targetPositions/);
    expect(() => model.forwardTrain({ ...batch, inputIds: new Int32Array(5).fill(99) }, 1)).toThrow(InvalidArgumentError);
    expect(() => model.forwardTrain(batch, 0)).toThrow(/temperature/);
  });
});

describe('KV-cache inference', () => {
  it('left-padded prefill gives the same next-token logits as each sequence alone', () => {
    const rng = Rng.fromSeed(8);
    const seqs = [randomSeq(rng, 4), randomSeq(rng, 9), randomSeq(rng, 6)];
    const width = 9;
    const ids = new Int32Array(3 * width);
    const mask = new Uint8Array(3 * width);
    seqs.forEach((s, r) => {
      ids.set(s, r * width + width - s.length);
      mask.fill(1, r * width + width - s.length, (r + 1) * width);
    });
    const cache = model.createCache(3, width);
    const logits = model.extend(cache, ids, mask, width);
    const got = logits.dataSync();
    const v = TINY.vocabSize;
    seqs.forEach((s, r) => {
      const full = logitsOf(model, s);
      expect(maxDiff(got.subarray(r * v, (r + 1) * v), full.subarray((s.length - 1) * v))).toBeLessThan(1e-5);
    });
    logits.dispose();
  });

  it('one-token and multi-token decode steps match a full forward (growing the cache), and leak nothing', () => {
    const rng = Rng.fromSeed(9);
    const seqs = [randomSeq(rng, 14), randomSeq(rng, 11)];
    const before = tf.memory().numTensors;
    const cache = model.createCache(2, 5); // exactly the prefill: every later step grows it
    const v = TINY.vocabSize;
    // prefill 5 and 3 tokens (left-padded to 5), then 1-token steps, then a [pad, x, y] / [x, y, z] chunk
    const pre = [5, 3];
    const fed = [...pre];
    const feed = (counts: number[]) => {
      const width = Math.max(...counts);
      const ids = new Int32Array(counts.length * width);
      const mask = new Uint8Array(counts.length * width);
      counts.forEach((n, r) => {
        ids.set(seqs[r].subarray(fed[r] - n, fed[r]), r * width + width - n);
        mask.fill(1, r * width + width - n, (r + 1) * width);
      });
      const logits = model.extend(cache, ids, mask, width);
      const data = logits.dataSync().slice() as Float32Array;
      logits.dispose();
      return data;
    };
    const check = (data: Float32Array) => {
      seqs.forEach((s, r) => {
        const full = logitsOf(model, s.subarray(0, fed[r]));
        expect(maxDiff(data.subarray(r * v, (r + 1) * v), full.subarray((fed[r] - 1) * v))).toBeLessThan(1e-5);
      });
    };
    check(feed(pre));
    for (let step = 0; step < 4; step++) {
      fed[0]++;
      fed[1]++;
      check(feed([1, 1]));
    }
    fed[0] += 2;
    fed[1] += 3;
    check(feed([2, 3]));
    expect(cache.length).toBe(5 + 4 + 3);
    expect(Array.from(cache.nextPositions)).toEqual(fed);
    cache.selectRows(new Int32Array([1]));
    fed.shift();
    seqs.shift();
    fed[0]++;
    check(feed([1]));
    expect(cache.capacity).toBeGreaterThanOrEqual(cache.length);
    expect(tf.memory().numTensors).toBe(before);
  });

  it('merges caches of different lengths into one that decodes identically', () => {
    const rng = Rng.fromSeed(10);
    const a = randomSeq(rng, 7);
    const b = randomSeq(rng, 3);
    const before = tf.memory().numTensors;
    const ca = model.createCache(1, 6);
    const cb = model.createCache(1, 2);
    tf.dispose([model.extend(ca, a.subarray(0, 6), new Uint8Array(6).fill(1), 6), model.extend(cb, b.subarray(0, 2), new Uint8Array(2).fill(1), 2)]);
    const merged = KvCache.merge([ca, cb], 1);
    expect(merged.length).toBe(6);
    expect(merged.capacity).toBe(7);
    expect(Array.from(merged.keyMask)).toEqual([1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0]);
    const logits = model.extend(merged, Int32Array.from([a[6], b[2]]), new Uint8Array([1, 1]), 1);
    const data = logits.dataSync();
    const v = TINY.vocabSize;
    expect(maxDiff(data.subarray(0, v), logitsOf(model, a).subarray(6 * v))).toBeLessThan(1e-5);
    expect(maxDiff(data.subarray(v), logitsOf(model, b).subarray(2 * v))).toBeLessThan(1e-5);
    logits.dispose();
    expect(tf.memory().numTensors).toBe(before);
  });
});
