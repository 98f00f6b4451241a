/**
 * Serve's memory estimate (src/serve/serve-memory.ts) at a real size, issue #31: a SmolLM2-135M-shaped
 * folder (30 layers, 49,152 ids, random BF16 weights) served on the wasm backend at 4,096 tokens (its
 * own 8,192 fit too; half keeps the test's time down), and a full-context prompt scored through `/v1/completions` with `echo` and
 * `logprobs: 20` (what lm-evaluation-harness's log-likelihood requests do, at the most alternatives).
 * The live tensor peak above the weights must stay under the estimate's scoring pass, and the heap
 * the estimate prints (weights, fused q/k/v, the larger pass, allocator slack) above what was live.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { selectBackend } from '../../src/backend/select.js';
import { inspectHfModel } from '../../src/models/hf/hf-model.js';
import { WASM_HEAP_BYTES } from '../../src/models/memory-estimate.js';
import { createServeApp } from '../../src/serve/app.js';
import { loadServedModel, serveMemoryOf } from '../../src/serve/load-model.js';
import { writePretrainedShape } from '../../scripts/make-pretrained-shape.js';
import { type LiveBytesTracker, trackLiveTensorBytes } from '../helpers/live-tensor-bytes.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-serve-memory-'));
let tracker: LiveBytesTracker;
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(async () => {
  await selectBackend('wasm');
  tracker = trackLiveTensorBytes();
});

describe("serve's memory estimate on a SmolLM2-135M-shaped folder", () => {
  it('bounds the live tensor peak of a full-context echo + logprobs request from above', async () => {
    const folder = join(dir, 'smollm2-shape');
    await writePretrainedShape({ folder });
    const atStart = tracker.read().live;
    const served = await loadServedModel(folder, { backend: 'wasm', maxContext: 4096 });
    try {
      const context = served.maxContext;
      expect(context).toBe(4096);
      const estimate = serveMemoryOf(await inspectHfModel(folder), context, 128 * 2 ** 20);
      expect(estimate.heap).toBeLessThanOrEqual(WASM_HEAP_BYTES);
      const weights = tracker.read().live - atStart;
      const app = createServeApp(served, { rng: Rng.fromSeed(0) });
      const rng = Rng.fromSeed(1);
      const prompt = Array.from({ length: context }, () => rng.int(served.vocabSize));
      tracker.resetPeak();
      const res = await app.request('/v1/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt, echo: true, logprobs: 20, max_tokens: 0 }) });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { choices: { logprobs: { token_logprobs: (number | null)[]; top_logprobs: (Record<string, number> | null)[] } }[] };
      const scored = body.choices[0]?.logprobs;
      expect(scored?.token_logprobs).toHaveLength(context);
      expect(scored?.token_logprobs.slice(1).every((x) => typeof x === 'number' && x <= 0)).toBe(true);
      expect(Object.keys(scored?.top_logprobs[1] ?? {}).length).toBeGreaterThan(0);
      const pass = tracker.read().peak - atStart - weights;
      const ratio = pass / estimate.scoring;
      console.log(`SmolLM2-135M shape, ${context}-token prompt scored (echo, logprobs 20): weights ${weights} B live; pass peak ${pass} B vs estimate ${estimate.scoring} B: ${ratio.toFixed(4)}; whole live peak ${weights + pass} B vs heap estimate ${estimate.heap} B: ${((weights + pass) / estimate.heap).toFixed(4)}`);
      expect(ratio).toBeLessThanOrEqual(1);
      expect(ratio).toBeGreaterThanOrEqual(0.95);
      expect(weights + pass).toBeLessThanOrEqual(estimate.heap);
    } finally {
      served.dispose();
    }
  }, 900_000);
});
