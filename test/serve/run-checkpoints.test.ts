/**
 * Serving a run of a pretrained model (model.from): the checkpoint's trained weights — full
 * fine-tuning, or LoRA adapters on the base — with the base's chat template. The weights are
 * changed from the base before the checkpoint is written, so serving the base by mistake fails.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { Rng } from '../../src/core/rng.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { selectBackend } from '../../src/backend/select.js';
import { saveCheckpoint } from '../../src/models/checkpoint.js';
import { loadHfModel } from '../../src/models/hf/hf-model.js';
import { writeAdapterFiles } from '../../src/models/lora/peft-files.js';
import { checkpointContentOf } from '../../src/runtime/checkpoint-content.js';
import { buildPolicyStack } from '../../src/runtime/policy-stack.js';
import { saveRunConfig } from '../../src/runtime/run-folder.js';
import { createServeApp } from '../../src/serve/app.js';
import { loadServedModel } from '../../src/serve/load-model.js';
import { modelScorer } from '../../src/serve/prompt-scorer.js';
import { TINY_CHAT_VOCAB, writeTinyChatModel } from './tiny-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-serve-runs-'));
let base: string;
const PROMPT = Int32Array.from([1, 100, 200, 300, 150, 42, 7, 2]);

beforeAll(async () => {
  await selectBackend('wasm');
  base = await writeTinyChatModel(join(dir, 'base'), 17);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes a run whose checkpoint holds changed weights; returns the run folder and the trained model's prompt scores. */
async function trainedRun(name: string, lora: boolean): Promise<{ runDir: string; trained: Float32Array }> {
  const runDir = join(dir, name);
  const config = resolveConfig(
    parseConfig({
      seed: 3,
      run: { dir, name },
      env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
      model: { from: base, maxContext: 160, ...(lora ? { lora: { rank: 4, alpha: 8 } } : {}) },
      sampling: { temperature: 0.8, topP: 0.9, maxActionTokens: 24 },
    }),
  );
  const stack = await buildPolicyStack(config, getEnvironmentSpec('babyai'), null);
  try {
    // What trains (every weight, or the adapters), moved away from the base.
    const rng = Rng.fromSeed(5);
    const changed = new Map([...stack.learnerModel.namedWeights()].map(([n, w]) => [n, { shape: w.shape, data: w.data.map((x) => x + 0.05 * rng.normal()) }]));
    stack.learnerModel.loadNamedWeights(changed);
    mkdirSync(runDir, { recursive: true });
    await saveRunConfig(runDir, config);
    await saveCheckpoint(runDir, checkpointContentOf(config, stack, 1, new Map(), { policyVersion: 1 }));
    // The same adapters as a plain PEFT folder (no run around it), naming the base by a relative path.
    const lora = stack.learnerModel.lora;
    if (lora !== null) {
      mkdirSync(join(dir, 'adapter'), { recursive: true });
      await writeAdapterFiles(join(dir, 'adapter'), lora, stack.learnerModel.namedWeights(), '../base');
    }
    return { runDir, trained: (await modelScorer(stack.learnerModel).score(PROMPT, 0)).logprobs };
  } finally {
    await stack.close();
  }
}

describe.each([
  ['full fine-tuning', false],
  ['LoRA', true],
])('serving a pretrained run (%s)', (_name, lora) => {
  it("serves the checkpoint's trained weights with the base's chat template and the run's sampling defaults", async () => {
    const { runDir, trained } = await trainedRun(lora ? 'lora' : 'full', lora);
    const served = await loadServedModel(runDir, { backend: 'wasm' });
    const reference = await loadHfModel(base);
    reference.restrictOutputs(TINY_CHAT_VOCAB);
    try {
      const scores = (await served.scorer.score(PROMPT, 0)).logprobs;
      const baseScores = (await modelScorer(reference).score(PROMPT, 0)).logprobs;
      scores.forEach((x, i) => {
        expect(x).toBeCloseTo(trained[i]!, 4);
      });
      expect(Math.max(...scores.map((x, i) => Math.abs(x - baseScores[i]!)))).toBeGreaterThan(1e-2);
      expect(served.id).toBe(lora ? 'lora' : 'full');
      expect(served.maxContext).toBe(160);
      expect(served.defaults).toEqual({ temperature: 0.8, topP: 0.9, chatMaxTokens: 24 });
      expect(served.chat?.kind).toBe('template');
      expect(served.policy.version).toBe(1);
      const app = createServeApp(served, { rng: Rng.fromSeed(0) });
      const tokenized = (await (await app.request('/tokenize', { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }), headers: { 'content-type': 'application/json' } })).json()) as { tokens: number[] };
      expect(served.tokens.decode(tokenized.tokens, true)).toBe('<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n');
      const reply = await app.request('/v1/chat/completions', { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], seed: 1 }), headers: { 'content-type': 'application/json' } });
      const body = (await reply.json()) as { usage: { completion_tokens: number }; system_fingerprint: string };
      expect(body.usage.completion_tokens).toBeLessThanOrEqual(24); // the run's per-turn limit
      expect(body.system_fingerprint).toBe('turnwise-v1');
    } finally {
      served.dispose();
      reference.dispose();
    }
  });
});

describe('serving a PEFT adapter folder', () => {
  it('puts the adapters on the base its adapter_config.json names (relative to the folder), with the base tokenizer files', async () => {
    const { trained } = await trainedRun('lora-for-adapter', true);
    const served = await loadServedModel(join(dir, 'adapter'), { backend: 'wasm' });
    try {
      const scores = (await served.scorer.score(PROMPT, 0)).logprobs;
      scores.forEach((x, i) => {
        expect(x).toBeCloseTo(trained[i]!, 4);
      });
      expect(served.id).toBe('adapter');
      expect(served.chat?.kind).toBe('template');
      expect(served.defaults).toEqual({ temperature: 1, topP: 1, chatMaxTokens: 'context' });
    } finally {
      served.dispose();
    }
  });
});

describe('serving a pretrained run at another context', () => {
  it("honours --max-context up to the base model's own limit and refuses more, naming the flag", async () => {
    const { runDir } = await trainedRun('context', true); // trained at model.maxContext 160; the base's own limit is 192
    const longer = await loadServedModel(runDir, { backend: 'wasm', maxContext: 190 });
    try {
      expect(longer.maxContext).toBe(190);
      expect(longer.notes.join('\n')).toContain('context: 190 tokens (--max-context');
    } finally {
      longer.dispose();
    }
    const trained = await loadServedModel(runDir, { backend: 'wasm' });
    try {
      expect(trained.maxContext).toBe(160);
      expect(trained.notes.join('\n')).toMatch(/context: 160 tokens \(the run's model\.maxContext; --max-context up to 192/);
    } finally {
      trained.dispose();
    }
    await expect(loadServedModel(runDir, { backend: 'wasm', maxContext: 400 })).rejects.toThrow(/--max-context.*400 is more than .*own limit of 192 tokens/);
  });
});

