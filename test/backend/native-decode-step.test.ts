import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { nativeBlas } from '../../src/backend/native-blas.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import type { KvCache } from '../../src/models/kv-cache.js';
import { nativeDecodeSteps, setNativeDecodeEnabled } from '../../src/models/transformer/native-decode.js';
import { type TransformerConfig, TransformerModel } from '../../src/models/transformer/model.js';
import { TransformerPolicy } from '../../src/models/transformer-policy.js';

// The native decode step (native/decode_step.c, issue #31): one call per layer and one for the head
// give the logits and the KV cache of the per-kernel path (TransformerModel.extend) to the bit, for
// every feature the decoder has (grouped-query attention, q/k/v biases, q/k norms, LoRA, tied and
// untied heads), after ragged left-padded prefills, step after step.

const { blas } = nativeBlas();

const BASE: TransformerConfig = { vocabSize: 97, dModel: 48, nLayers: 3, nHeads: 6, nKvHeads: 2, headDim: 8, ffnHidden: 72, maxContext: 128, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: false };
const CASES: Array<{ name: string; config: TransformerConfig; lora?: boolean }> = [
  { name: 'grouped-query attention, untied head', config: BASE },
  { name: 'q/k/v biases and a tied head (Qwen2)', config: { ...BASE, qkvBias: true, tieEmbeddings: true, architecture: 'qwen2' } },
  { name: 'q/k norms, o and MLP biases (Qwen3-like, Llama biases)', config: { ...BASE, qkNorm: true, outputBias: true, mlpBias: true } },
  { name: 'LoRA on every projection', config: { ...BASE, qkvBias: true }, lora: true },
];

const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

function cacheBits(cache: KvCache, layers: number): number[][] {
  return Array.from({ length: layers }, (_, l) => {
    const { key, value } = cache.layerBuffers(l);
    return [...bits(key), ...bits(value)];
  });
}

/** A model with random non-zero biases, norms and adapters, so that every term contributes. */
function model(config: TransformerConfig, lora: boolean): TransformerModel {
  const m = new TransformerModel(config, Rng.fromSeed(4));
  const rng = Rng.fromSeed(9);
  const named = m.namedWeights();
  for (const [name, w] of named) if (name.endsWith('.bias') || name.endsWith('norm.weight')) for (let i = 0; i < w.data.length; i++) w.data[i] = 0.5 + rng.normal() * 0.3;
  m.loadNamedWeights(named);
  if (lora) {
    m.attachLora({ rank: 4, alpha: 8, dropout: 0, targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] }, Rng.fromSeed(5));
    const adapters = m.namedWeights(); // B starts at zero: give it values
    for (const w of adapters.values()) for (let i = 0; i < w.data.length; i++) w.data[i] = rng.normal() * 0.1;
    m.loadNamedWeights(adapters);
  }
  return m;
}

describe.runIf(blas !== null)('native decode step (wasm backend)', () => {
  beforeAll(async () => {
    await selectBackend('wasm', { matmul: 'native' });
  });

  for (const { name, config, lora } of CASES) {
    it(`gives extend()'s logits and cache to the bit: ${name}`, async () => {
      const m = model(config, lora === true);
      const rng = Rng.fromSeed(1);
      const rows = 5;
      const width = 7;
      // Left-padded ragged prefill: row r has width - r real tokens.
      const ids = Int32Array.from({ length: rows * width }, () => rng.int(config.vocabSize));
      const mask = new Uint8Array(rows * width).fill(1);
      for (let r = 0; r < rows; r++) mask.fill(0, r * width, r * width + Math.min(r, width - 1));
      const viaTfjs = m.createCache(rows, width + 2);
      const viaNative = m.createCache(rows, width + 2);
      for (const cache of [viaTfjs, viaNative]) tf.dispose(m.extend(cache, ids, mask, width));
      const before = nativeDecodeSteps();
      for (let step = 0; step < 4; step++) {
        const next = Int32Array.from({ length: rows }, () => rng.int(config.vocabSize));
        const want = (await m.extend(viaTfjs, next, new Uint8Array(rows).fill(1), 1).data()) as Float32Array;
        const got = m.decodeStep(viaNative, next);
        expect(got, 'the native step ran').not.toBeNull();
        expect(bits(got as Float32Array), `logits of step ${step}`).toEqual(bits(want));
        expect(viaNative.length).toBe(viaTfjs.length);
        expect(Array.from(viaNative.nextPositions)).toEqual(Array.from(viaTfjs.nextPositions));
        expect(Array.from(viaNative.keyMask)).toEqual(Array.from(viaTfjs.keyMask));
        expect(cacheBits(viaNative, config.nLayers), `cache after step ${step}`).toEqual(cacheBits(viaTfjs, config.nLayers));
      }
      expect(nativeDecodeSteps() - before).toBe(4);
      m.dispose();
    });
  }

  it('decodeProfile charges each phase of a step its thread-CPU time, then starts again from zero', () => {
    const profile = (blas as unknown as { decodeProfile(): number[] }).decodeProfile.bind(blas);
    const m = model(BASE, false);
    const cache = m.createCache(2, 8);
    tf.dispose(m.extend(cache, Int32Array.of(1, 2, 3, 4), new Uint8Array(4).fill(1), 2));
    profile();
    for (let step = 0; step < 3; step++) expect(m.decodeStep(cache, Int32Array.of(5 + step, 6))).not.toBeNull();
    const seconds = profile();
    expect(seconds).toHaveLength(11); // norm, qkv, qkNormRope, cache, attention, o, adds, gateUp, swiglu, down, head
    for (const s of seconds) expect(s).toBeGreaterThanOrEqual(0);
    expect(seconds.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(profile().every((s) => s === 0)).toBe(true);
    m.dispose();
  });

  it('declines what it does not run (an empty cache, a position past the context) and changes nothing', () => {
    const m = model(BASE, false);
    const cache = m.createCache(2, 4);
    expect(m.decodeStep(cache, Int32Array.of(1, 2))).toBeNull();
    expect(cache.length).toBe(0);
    const full = m.createCache(1, BASE.maxContext + 1);
    tf.dispose(m.extend(full, Int32Array.from({ length: BASE.maxContext }, (_, i) => i % 90), new Uint8Array(BASE.maxContext).fill(1), BASE.maxContext));
    expect(m.decodeStep(full, Int32Array.of(3))).toBeNull();
    expect(full.length).toBe(BASE.maxContext);
    m.dispose();
  });

  it("gives the sampler the same tokens and log-probs with and without it (greedy, B = 3)", async () => {
    const m = model({ ...BASE, qkvBias: true }, false);
    const rng = Rng.fromSeed(3);
    const requests = Array.from({ length: 3 }, (_, i) => ({ contextTokens: Int32Array.from({ length: 5 + 3 * i }, () => rng.int(BASE.vocabSize - 1)), actionChoices: null }));
    const policy = new TransformerPolicy(m, { endTokenId: BASE.vocabSize - 1, reuseCaches: false });
    const before = nativeDecodeSteps();
    const native = await policy.greedyActions(requests, 6);
    expect(nativeDecodeSteps() - before).toBeGreaterThan(0);
    setNativeDecodeEnabled(false);
    try {
      const tfjs = await policy.greedyActions(requests, 6);
      expect(native.map((r) => Array.from(r.tokens))).toEqual(tfjs.map((r) => Array.from(r.tokens)));
      expect(native.map((r) => Array.from(r.logprobs))).toEqual(tfjs.map((r) => Array.from(r.logprobs)));
    } finally {
      setNativeDecodeEnabled(true);
    }
    m.dispose();
  });
});
