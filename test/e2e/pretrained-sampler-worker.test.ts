/**
 * A pretrained LoRA model's sampler in an inference worker (issue #32): the worker reads the base
 * from the Hugging Face folder itself and receives only the adapters each version, and samples
 * exactly what the same model samples on the main thread — tokens, log-probs and entropies —
 * before and after new adapters arrive.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import type { ActRequest } from '../../src/core/policy.js';
import { Rng } from '../../src/core/rng.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { selectBackend } from '../../src/backend/select.js';
import { buildPolicyStack } from '../../src/runtime/policy-stack.js';
import { writeTinyChatModel } from '../serve/tiny-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-sampler-worker-'));
let folder: string;
beforeAll(async () => {
  await selectBackend('wasm');
  folder = await writeTinyChatModel(join(dir, 'base'), 23, { maxContext: 1024 });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const configOf = (workers: number) =>
  resolveConfig(parseConfig({ seed: 2, model: { from: folder, maxContext: 1024, lora: { rank: 4, alpha: 8 } }, runtime: { inferenceWorkers: workers } }));

describe("a pretrained LoRA model's sampler in an inference worker", () => {
  it('samples what the main thread samples, before and after new adapters', async () => {
    const spec = getEnvironmentSpec('babyai');
    const [inThread, inWorker] = [await buildPolicyStack(configOf(0), spec, null), await buildPolicyStack(configOf(1), spec, null)];
    try {
      expect(inThread.policy.placement).toBe('in-thread');
      expect(inWorker.policy.placement).toBe('1 inference worker');
      const text = inThread.text;
      const requests: ActRequest[] = [0, 1, 2].map((i) => ({ contextTokens: text.context({ instruction: 'Go to the red ball.', pastTurns: [], observationText: `A wall ${i} steps ahead.` }), actionChoices: null, seed: 100 + i }));
      const options = { temperature: 0.9, topP: 0.95, maxNewTokens: 12 };
      const sample = async () => Promise.all([inThread, inWorker].map((s) => s.policy.sampleActions(requests, options, Rng.fromSeed(0))));
      const [a, b] = await sample();
      expect(b).toEqual(a);
      // New adapters, published as a learner publishes them (what trains: the adapters alone).
      const rng = Rng.fromSeed(7);
      const adapters = new Map([...inThread.learnerModel.namedWeights()].map(([name, w]) => [name, { shape: w.shape, data: Float32Array.from(w.data, () => 0.3 * rng.normal()) }]));
      expect([...adapters.keys()].every((name) => name.includes('lora_'))).toBe(true);
      await Promise.all([inThread, inWorker].map((s) => s.policy.loadWeights(1, adapters)));
      const [c, d] = await sample();
      expect(d).toEqual(c);
      expect(c.map((r) => Array.from(r.tokens))).not.toEqual(a.map((r) => Array.from(r.tokens)));
    } finally {
      await Promise.all([inThread.close(), inWorker.close()]);
    }
  }, 180_000);
});
