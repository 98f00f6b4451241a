/**
 * The sampler's part of the memory estimate (src/models/sampler-memory.ts) against the live tensor
 * bytes of a real sampling call on the wasm backend: `TransformerPolicy.sampleActions` over a
 * LoRA model with q/k/v biases (Qwen2.5's layout), prefill calls capped in tokens as a pretrained
 * run caps them, with the native kernels and with their tfjs forms. The estimate must bound the
 * call from above and stay within 10 % of it; the KV caches must stay out of the heap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { nativeKernels, nativeUse, setNativeUse } from '../../src/backend/native.js';
import { selectBackend } from '../../src/backend/select.js';
import { ALLOCATOR_SLACK, estimateMemory } from '../../src/models/memory-estimate.js';
import { samplerMemory } from '../../src/models/sampler-memory.js';
import { LORA_TARGETS, type LoraSpec } from '../../src/models/lora/lora.js';
import { type TransformerConfig, TransformerModel } from '../../src/models/transformer/model.js';
import { TransformerPolicy } from '../../src/models/transformer-policy.js';
import { trackLiveTensorBytes, type LiveBytesTracker } from '../helpers/live-tensor-bytes.js';

const SHAPE: TransformerConfig = { vocabSize: 4096, dModel: 128, nLayers: 4, nHeads: 4, nKvHeads: 2, ffnHidden: 320, maxContext: 512, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: true, qkvBias: true, architecture: 'qwen2' };
const LORA: LoraSpec = { rank: 8, alpha: 16, dropout: 0, targets: [...LORA_TARGETS] };
/** 8 rows of 128-token prompts in prefill calls of at most 512 tokens: two calls of exactly 512. */
const ROWS = 8;
const PROMPT = 128;
const NEW_TOKENS = 6;
const PREFILL_TOKENS = 512;
/** Attention groups of at most 4 rows of 128 x 128 scores per head (the run's default, 24 Mi, would dwarf this shape). */
const MAX_SCORES = 4 * SHAPE.nHeads * PROMPT * PROMPT;

let tracker: LiveBytesTracker;
const was = nativeUse();
beforeAll(async () => {
  await selectBackend('wasm');
  tracker = trackLiveTensorBytes();
});
afterAll(() => setNativeUse(was));

/** One sampling call; the live tensor peak above what was alive before it, and what is alive after it. */
async function sampleOnce(): Promise<{ peak: number; after: number; cachedBytes: number }> {
  const base = new TransformerModel(SHAPE, Rng.fromSeed(1));
  const model = base.withOwnAdapters(LORA, Rng.fromSeed(2));
  const policy = new TransformerPolicy(model, { endTokenId: SHAPE.vocabSize - 1, version: 0, maxPrefillTokens: PREFILL_TOKENS, maxPrefillScores: MAX_SCORES });
  const rng = Rng.fromSeed(3);
  const requests = Array.from({ length: ROWS }, (_, r) => ({
    contextTokens: Int32Array.from({ length: PROMPT }, () => rng.int(SHAPE.vocabSize - 1)),
    actionChoices: null,
    episodeId: `e${r}`,
  }));
  const before = tracker.read().live;
  tracker.resetPeak();
  try {
    await policy.sampleActions(requests, { temperature: 1, topP: 1, maxNewTokens: NEW_TOKENS }, rng);
    return { peak: tracker.read().peak - before, after: tracker.read().live - before, cachedBytes: policy.cacheStats.bytes };
  } finally {
    policy.releaseEpisodes(requests.map((r) => r.episodeId));
    model.dispose();
    base.dispose();
  }
}

describe('the sampler part of the memory estimate against a sampling call', () => {
  it.each([
    ['native kernels', 'all' as const],
    ['tfjs forms', 'off' as const],
  ])('bounds the live tensor peak from above within 10 %%, the KV caches outside the heap: %s', async (_name, use) => {
    setNativeUse(use);
    const native = nativeKernels() !== null;
    expect(native).toBe(use === 'all'); // CI has the addon: both paths run
    const plan = { rows: ROWS, context: PROMPT + NEW_TOKENS, prefillTokens: PREFILL_TOKENS, nativeKernels: native, maxScores: MAX_SCORES };
    const estimate = samplerMemory(SHAPE, LORA, plan);
    const { peak, after, cachedBytes } = await sampleOnce();
    // What stays is the fused q/k/v weights (built on the first call); the episodes' caches are kept, in JS memory.
    expect(after).toBe(estimate.fusedQkv);
    expect(cachedBytes).toBeGreaterThan(0);
    const ratio = peak / (estimate.fusedQkv + estimate.forward);
    console.log(`${use}: live peak ${peak} B vs estimate ${estimate.fusedQkv + estimate.forward} B: ${ratio.toFixed(4)}`);
    expect(ratio).toBeLessThanOrEqual(1);
    expect(ratio).toBeGreaterThanOrEqual(0.9);
  });

  it('puts the fused weights and one forward call in the worker heap and the KV caches outside it', () => {
    const plan = { lora: LORA, reference: false, microBatchTokens: 256, sequenceLength: 256, kvCacheBytes: 2 ** 20, checkpointing: true, samplerWorkers: 1, samplerRows: ROWS, prefillTokens: PREFILL_TOKENS, samplerContext: PROMPT + NEW_TOKENS, nativeKernels: true };
    const e = estimateMemory(SHAPE, plan);
    const part = samplerMemory(SHAPE, LORA, { rows: ROWS, context: PROMPT + NEW_TOKENS, prefillTokens: PREFILL_TOKENS, nativeKernels: true });
    expect(e.samplerTotal).toBe(Math.ceil((1 + ALLOCATOR_SLACK) * (e.weights + e.samplerCopy + part.fusedQkv + part.forward)));
    // Each row's caches and the merged copy of a call in flight: 2 x rows x context x keys and values
    // of every layer (2 key/value heads of 32).
    expect(part.kvInFlight).toBe(2 * ROWS * (PROMPT + NEW_TOKENS) * 2 * SHAPE.nLayers * 2 * 32 * 4);
    expect(e.kvCache).toBe(2 ** 20 + part.kvInFlight);
    // More rows per call grow the caches outside the heap, hardly the heap: a prefill call stays
    // within its tokens (only an attention group's keys and a decode step grow with the rows).
    const wide = estimateMemory(SHAPE, { ...plan, samplerRows: 4 * ROWS });
    expect(wide.kvInFlight).toBe(4 * e.kvInFlight);
    expect(wide.samplerTotal - e.samplerTotal).toBeLessThan((wide.kvInFlight - e.kvInFlight) / 4);
  });
});
