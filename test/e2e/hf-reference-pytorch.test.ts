/**
 * turnwise's Hugging Face loader and forward passes against an independent PyTorch reference
 * (test/models/hf/torch_reference.py, run with Debian's python3-torch; no transformers): tiny
 * random Llama (MHA; GQA + tied + llama3 RoPE; attention and MLP biases), Qwen2 (q/k/v biases),
 * Qwen3 (q/k-norm, head_dim != hidden / heads, BF16) and Mistral (1 kv head, sliding window,
 * linear RoPE, F16 in two shards). Logits within 1e-4 relative, identical greedy tokens through
 * every sampling path, training log-probs equal to the reference's log-softmax.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';
import { describeHfModel, inspectHfModel, loadHfModel } from '../../src/models/hf/hf-model.js';
import { TransformerModel } from '../../src/models/transformer/model.js';
import { readAdapterFiles, writeAdapterFiles } from '../../src/models/lora/peft-files.js';
import { TransformerPolicy } from '../../src/models/transformer-policy.js';

interface Reference {
  readonly prompts: number[][];
  readonly seqLen: number;
  readonly vocab: number;
  readonly logits: number[]; // [B, T, V], left-padded rows
  readonly greedy: number[][];
}

/** The independent PyTorch reference, beside the model tests it serves. */
const TORCH_REFERENCE = join(import.meta.dirname, '..', 'models', 'hf', 'torch_reference.py');
const VARIANTS = ['llama-mha', 'llama-gqa-tied', 'llama-bias', 'qwen2', 'qwen3-bf16', 'mistral-f16-sharded'] as const;
const EOS = 2; // every variant's config.json eos_token_id
let dir: string;
let reference: Record<string, Reference>;

beforeAll(async () => {
  await selectBackend('wasm');
  dir = mkdtempSync(join(tmpdir(), 'turnwise-hf-ref-'));
  execFileSync('/usr/bin/python3', [TORCH_REFERENCE, dir], { stdio: 'inherit' });
  reference = JSON.parse(readFileSync(join(dir, 'reference.json'), 'utf8'));
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** max |a - b| over the real (unpadded) positions, relative to the largest |b| there. */
function relativeLogitError(ours: Float32Array, ref: Reference): number {
  const { seqLen: t, vocab: v } = ref;
  let diff = 0;
  let scale = 0;
  ref.prompts.forEach((prompt, r) => {
    for (let i = t - prompt.length; i < t; i++) {
      for (let j = 0; j < v; j++) {
        const at = (r * t + i) * v + j;
        diff = Math.max(diff, Math.abs(ours[at] - ref.logits[at]));
        scale = Math.max(scale, Math.abs(ref.logits[at]));
      }
    }
  });
  return diff / scale;
}

/** The reference continuation up to and including its first end-of-sequence token (where a policy stops). */
function untilEos(tokens: number[]): number[] {
  const at = tokens.indexOf(EOS);
  return at < 0 ? tokens : tokens.slice(0, at + 1);
}

describe.each(VARIANTS)('%s', (variant) => {
  let model: TransformerModel;
  let ref: Reference;

  beforeAll(async () => {
    ref = reference[variant] as Reference;
    model = await loadHfModel(join(dir, variant));
  });
  afterAll(() => model.dispose());

  it('describes what it loaded', async () => {
    const info = await inspectHfModel(join(dir, variant));
    const line = describeHfModel(info);
    expect(line).toContain(info.config.architecture as string);
    expect(line).toMatch(/parameters/);
    expect(info.parameters).toBe(model.parameterCount);
  });

  it('computes the reference logits within 1e-4 relative (left-padded batch)', () => {
    const { prompts, seqLen: t } = ref;
    const ids = new Int32Array(prompts.length * t);
    const mask = new Uint8Array(prompts.length * t);
    prompts.forEach((p, r) => {
      ids.set(p, r * t + t - p.length);
      mask.fill(1, r * t + t - p.length, (r + 1) * t);
    });
    const logits = model.forwardLogits(ids, mask, prompts.length, t);
    const ours = logits.dataSync() as Float32Array;
    logits.dispose();
    expect(relativeLogitError(ours, ref)).toBeLessThan(1e-4);
  });

  it('gives the reference logits through the KV-cached forwards (packed prefill, then JS and tfjs decode attention)', () => {
    const { seqLen: t, vocab: v } = ref;
    const refRow = (r: number, position: number) => {
      const at = (r * t + t - ref.prompts[r].length + position) * v;
      return ref.logits.slice(at, at + v);
    };
    const relative = (ours: Float32Array, want: number[]) => {
      let diff = 0;
      let scale = 0;
      want.forEach((x, j) => {
        diff = Math.max(diff, Math.abs(ours[j] - x));
        scale = Math.max(scale, Math.abs(x));
      });
      return diff / scale;
    };
    ref.prompts.forEach((prompt, r) => {
      const split = Math.max(1, prompt.length - 2);
      const cache = model.createCache(1, prompt.length + 4);
      const first = model.extendPacked([cache], [Int32Array.from(prompt.slice(0, split))]);
      expect(relative(first.dataSync() as Float32Array, refRow(r, split - 1))).toBeLessThan(1e-4);
      first.dispose();
      // One token at a time over the cache: decode-sized steps (attention in JS for small caches).
      for (let i = split; i < prompt.length; i++) {
        const step = model.extend(cache, Int32Array.of(prompt[i]), Uint8Array.of(1), 1);
        expect(relative(step.dataSync() as Float32Array, refRow(r, i))).toBeLessThan(1e-4);
        step.dispose();
      }
    });
    // Rows of different lengths in one packed call (grouped attention, JS and tfjs groups).
    const caches = ref.prompts.map((p) => model.createCache(1, p.length));
    const packed = model.extendPacked(caches, ref.prompts.map((p) => Int32Array.from(p)));
    const rows = packed.dataSync() as Float32Array;
    packed.dispose();
    ref.prompts.forEach((p, r) => {
      expect(relative(rows.subarray(r * v, (r + 1) * v), refRow(r, p.length - 1))).toBeLessThan(1e-4);
    });
  });

  it('gives the reference log-probs in the training forward', () => {
    const prompt = ref.prompts[0];
    const n = prompt.length - 1;
    const batch = {
      batchSize: 1,
      seqLen: prompt.length,
      inputIds: Int32Array.from(prompt),
      attentionMask: new Uint8Array(prompt.length).fill(1),
      targetPositions: Int32Array.from({ length: n }, (_, i) => i),
      targetIds: Int32Array.from(prompt.slice(1)),
      allowedOffsets: new Int32Array(n + 1),
      allowedIds: new Int32Array(0),
    };
    const { logprobs, entropy } = model.forwardTrain(batch, 1);
    const ours = logprobs.dataSync() as Float32Array;
    tf.dispose([logprobs, entropy]);
    const { seqLen: t, vocab: v } = ref;
    for (let i = 0; i < n; i++) {
      const row = ref.logits.slice(((0 * t) + t - prompt.length + i) * v, ((0 * t) + t - prompt.length + i + 1) * v);
      const max = Math.max(...row);
      const logZ = max + Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0));
      expect(Math.abs(ours[i] - (row[prompt[i + 1]] - logZ))).toBeLessThan(1e-3);
    }
  });

  it.each([
    ['packed prefill', true],
    ['padded prefill', false],
  ])('generates the reference greedy tokens (%s, KV cache)', async (_label, packed) => {
    const policy = new TransformerPolicy(model, { endTokenId: EOS, packed, reuseCaches: false });
    const results = await policy.greedyActions(
      ref.prompts.map((p) => ({ contextTokens: Int32Array.from(p), actionChoices: null })),
      12,
    );
    results.forEach((result, r) => {
      expect(Array.from(result.tokens)).toEqual(untilEos(ref.greedy[r]));
    });
  });

  it('samples from the same distribution it reports (log-probs of the sampled tokens)', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: EOS });
    const [result] = await policy.sampleActions([{ contextTokens: Int32Array.from(ref.prompts[0]), actionChoices: null }], { temperature: 1, topP: 1, maxNewTokens: 1 }, Rng.fromSeed(3));
    const { seqLen: t, vocab: v } = ref;
    const row = ref.logits.slice((t - 1) * v, t * v); // last position of row 0 (the longest prompt: no padding)
    const max = Math.max(...row);
    const logZ = max + Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0));
    expect(Math.abs((result?.logprobs[0] as number) - (row[result?.tokens[0] as number] - logZ))).toBeLessThan(1e-3);
  });
});

describe('LoRA (PEFT adapter on qwen2, all seven target modules)', () => {
  interface LoraReference {
    readonly prompt: number[];
    readonly logits: number[];
    readonly logLikelihood: number;
    readonly grads: Record<string, number[]>;
    readonly vocab: number;
  }
  let ref: LoraReference;
  let model: TransformerModel;
  const folder = () => join(dir, 'qwen2-lora');

  beforeAll(async () => {
    ref = (reference as unknown as Record<string, LoraReference>)['qwen2-lora'] as LoraReference;
    model = await loadHfModel(join(folder(), 'base'));
    const adapter = await readAdapterFiles(folder());
    expect(adapter.spec).toMatchObject({ rank: 4, alpha: 8, dropout: 0 });
    model.attachLora(adapter.spec, adapter.weights);
  });
  afterAll(() => model.dispose());

  const logitsOf = (m: TransformerModel): Float32Array => {
    const ids = Int32Array.from(ref.prompt);
    const t = m.forwardLogits(ids, new Uint8Array(ids.length).fill(1), 1, ids.length);
    const out = t.dataSync() as Float32Array;
    t.dispose();
    return out;
  };
  const relative = (ours: Float32Array, want: readonly number[]) => {
    let diff = 0;
    let scale = 0;
    want.forEach((x, i) => {
      diff = Math.max(diff, Math.abs(ours[i] - x));
      scale = Math.max(scale, Math.abs(x));
    });
    return diff / scale;
  };

  it('computes the adapted logits, and the base ones with adapters off', async () => {
    expect(relative(logitsOf(model), ref.logits)).toBeLessThan(1e-4);
    const base = await loadHfModel(join(folder(), 'base'));
    const off = model.withAdaptersOff(() => logitsOf(model));
    expect(Array.from(off)).toEqual(Array.from(logitsOf(base)));
    base.dispose();
  });

  it('trains only the adapters, with the reference gradients', () => {
    const n = ref.prompt.length - 1;
    const batch = {
      batchSize: 1,
      seqLen: ref.prompt.length,
      inputIds: Int32Array.from(ref.prompt),
      attentionMask: new Uint8Array(ref.prompt.length).fill(1),
      targetPositions: Int32Array.from({ length: n }, (_, i) => i),
      targetIds: Int32Array.from(ref.prompt.slice(1)),
      allowedOffsets: new Int32Array(n + 1),
      allowedIds: new Int32Array(0),
    };
    const variables = model.trainableVariables();
    expect(variables.length).toBe(Object.keys(ref.grads).length);
    const { value, grads } = tf.variableGrads(() => {
      const { logprobs, entropy } = model.forwardTrain(batch, 1);
      entropy.dispose();
      return tf.sum(logprobs) as tf.Scalar;
    });
    expect(Math.abs(value.dataSync()[0] - ref.logLikelihood)).toBeLessThan(1e-3 * Math.abs(ref.logLikelihood));
    expect(Object.keys(grads).length).toBe(variables.length); // the frozen base gets no gradient
    // Map our variables (A [in, r], B [r, out]) to PEFT names through namedWeights' order.
    const names = [...model.namedWeights().keys()];
    variables.forEach((v, i) => {
      const ours = grads[v.name] as tf.Tensor;
      const peft = tf.transpose(ours).dataSync() as Float32Array; // stored transposed from PEFT's layout
      expect(relative(peft, ref.grads[names[i] as string] as number[])).toBeLessThan(1e-3);
    });
    tf.dispose([value, ...Object.values(grads)]);
  });

  it('merges into the base for export: a plain model with the same logits', () => {
    const merged = TransformerModel.fromNamedWeights(model.config, model.mergedNamedWeights());
    expect(merged.lora).toBeNull();
    expect(relative(logitsOf(merged), ref.logits)).toBeLessThan(1e-4);
    merged.dispose();
  });

  it('writes PEFT files that read back to the same adapter', async () => {
    const out = mkdtempSync(join(tmpdir(), 'turnwise-peft-'));
    await writeAdapterFiles(out, model.lora as NonNullable<TransformerModel['lora']>, model.namedWeights(), 'base');
    const back = await readAdapterFiles(out);
    expect(back.spec).toEqual(model.lora);
    for (const [name, w] of model.namedWeights()) expect(Array.from(back.weights.get(name)?.data ?? [])).toEqual(Array.from(w.data));
    rmSync(out, { recursive: true, force: true });
  });

  it('shares the frozen base with a sampler copy of the adapters (no second base)', () => {
    const before = tf.memory().numBytes;
    const sampler = model.sharingBase(Rng.fromSeed(1));
    const added = tf.memory().numBytes - before;
    expect(added).toBeLessThan(model.trainableParameterCount * 4 * 2); // the adapters (and their init), not the base
    expect(relative(logitsOf(sampler), ref.logits)).toBeLessThan(1e-4);
    sampler.dispose();
    expect(relative(logitsOf(model), ref.logits)).toBeLessThan(1e-4); // the learner's base survived
  });
});
