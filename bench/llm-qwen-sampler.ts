/**
 * The sampler's side of a LoRA run at the Qwen2.5-0.5B shape (what an inference worker's heap
 * holds): one `sampleActions` call of `rows` episodes whose first prompts are `promptTokens` long,
 * through `TransformerPolicy` with a pretrained run's settings (prefill calls of at most
 * `PRETRAINED_PREFILL_TOKENS` new tokens, a 128 MiB cache budget), its live tensor peak and the wasm
 * heap printed against the estimate of that worker's heap (`samplerTotal`), and the peak above the
 * weights against the estimate's adapters, fused q/k/v weights and forward call. The KV caches are
 * JS memory outside the heap (the estimate counts them apart). Run on the bench's own thread, with
 * the bench's model: the same weights and kernels a worker would hold and run.
 */
import { performance } from 'node:perf_hooks';
import { Rng } from '../src/core/rng.js';
import { tensorHeapBytes } from '../src/backend/heap.js';
import type { LoraSpec } from '../src/models/lora/lora.js';
import { ALLOCATOR_SLACK, describeEstimate, estimateMemory } from '../src/models/memory-estimate.js';
import type { TransformerModel } from '../src/models/transformer/model.js';
import { TransformerPolicy } from '../src/models/transformer-policy.js';
import { PRETRAINED_PREFILL_TOKENS } from '../src/runtime/pretrained-stack.js';
import { nativeKernels } from '../src/backend/native.js';
import type { LiveBytesTracker } from '../test/helpers/live-tensor-bytes.js';

/** What one sampling call is made of. */
export interface SamplerCase {
  readonly rows: number;
  readonly promptTokens: number;
  readonly newTokens: number;
}

const KV_BUDGET = 128 * 2 ** 20;
const gib = (n: number) => `${(n / 2 ** 30).toFixed(3)} GiB`;

/**
 * Samples once on `base` with adapters `spec` and prints time, live tensor peak and heap against the estimate.
 * @example await qwenSampler(model, spec, { rows: 16, promptTokens: 647, newTokens: 64 }, tracker);
 */
export async function qwenSampler(base: TransformerModel, spec: LoraSpec, c: SamplerCase, live: LiveBytesTracker | null): Promise<void> {
  const config = base.config;
  const needs = estimateMemory(config, {
    lora: spec,
    reference: false,
    microBatchTokens: c.promptTokens + c.newTokens,
    sequenceLength: c.promptTokens + c.newTokens,
    kvCacheBytes: KV_BUDGET,
    checkpointing: true,
    samplerWorkers: 1,
    samplerRows: c.rows,
    prefillTokens: PRETRAINED_PREFILL_TOKENS,
    samplerContext: c.promptTokens + c.newTokens,
    nativeKernels: nativeKernels() !== null,
  });
  console.log(`Qwen2.5-0.5B shape, sampler: ${c.rows} rows of ${c.promptTokens}-token prompts, ${c.newTokens} new tokens each; estimate ${describeEstimate(needs)}`);
  const start = live?.read().live ?? 0;
  live?.resetPeak();
  const adapted = base.withOwnAdapters(spec, Rng.fromSeed(3));
  const policy = new TransformerPolicy(adapted, { endTokenId: config.vocabSize - 1, version: 0, cacheMaxBytes: KV_BUDGET, maxPrefillTokens: PRETRAINED_PREFILL_TOKENS });
  const rng = Rng.fromSeed(5);
  const requests = Array.from({ length: c.rows }, (_, r) => ({
    contextTokens: Int32Array.from({ length: c.promptTokens }, () => rng.int(config.vocabSize - 1)),
    actionChoices: null,
    episodeId: `e${r}`,
  }));
  try {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const results = await policy.sampleActions(requests, { temperature: 0.7, topP: 1, maxNewTokens: c.newTokens }, rng);
    const wall = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const tokens = results.reduce((n, r) => n + r.tokens.length, 0);
    console.log(`Qwen2.5-0.5B shape, sampler: ${c.rows * c.promptTokens} prompt tokens and ${tokens} sampled in ${wall.toFixed(1)} s (${((used.user + used.system) / 1e6).toFixed(1)} s CPU)`);
    if (live !== null) {
      const peak = live.read().peak;
      const beforeSlack = needs.samplerTotal / (1 + ALLOCATOR_SLACK);
      const above = needs.samplerCopy + needs.fusedQkv + needs.prefill;
      console.log(`Qwen2.5-0.5B shape, sampler: live tensor peak ${gib(peak)} vs the worker's estimate before slack ${gib(beforeSlack)} (${(peak / beforeSlack).toFixed(3)}); above the weights ${gib(peak - start)} vs adapters + fused q/k/v + prefill ${gib(above)} (${((peak - start) / above).toFixed(3)}); wasm heap ${gib(tensorHeapBytes() ?? 0)} vs printed ${gib(needs.samplerTotal)}; KV caches kept after the call ${gib(policy.cacheStats.bytes)} (JS memory)`);
    }
  } finally {
    policy.releaseEpisodes(requests.map((r) => r.episodeId));
    adapted.dispose();
  }
}
