/**
 * Checkpoints and exported model folders as the ecosystem reads them: the independent PyTorch
 * reference (test/models/hf/torch_reference.py --check, reading config.json, the model's safetensors,
 * tokenizer_config.json and generation_config.json as a Hugging Face loader would) must find the
 * fields generation depends on and compute the same logits as turnwise — for turnwise's own model
 * and for a LoRA run's adapters merged into a pretrained base.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { Rng } from '../../src/core/rng.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import '../../src/envs/index.js';
import { selectBackend } from '../../src/backend/select.js';
import { saveCheckpoint } from '../../src/models/checkpoint.js';
import { writeHfConfig } from '../../src/models/hf/hf-config.js';
import { loadHfModel } from '../../src/models/hf/hf-model.js';
import { readSafetensors, toBfloat16, writeSafetensors } from '../../src/models/safetensors.js';
import { TransformerModel } from '../../src/models/transformer/model.js';
import { checkpointContentOf } from '../../src/runtime/checkpoint-content.js';
import { exportModelFolder } from '../../src/runtime/export-model.js';
import { buildPolicyStack, type PolicyStack } from '../../src/runtime/policy-stack.js';
import { saveRunConfig } from '../../src/runtime/run-folder.js';

interface Checked {
  readonly config: Record<string, unknown>;
  readonly generation_config: Record<string, unknown> | null;
  readonly tokenizer_config: Record<string, unknown>;
  readonly has_chat_template: boolean;
  readonly tensors: string[];
  readonly logits: number[];
}

/** The independent PyTorch reference, beside the model tests it serves. */
const TORCH_REFERENCE = join(import.meta.dirname, '..', 'models', 'hf', 'torch_reference.py');
let dir: string;
beforeAll(async () => {
  await selectBackend('wasm');
  dir = mkdtempSync(join(tmpdir(), 'turnwise-export-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function referenceCheck(folder: string, prompt: number[]): Checked {
  const ids = join(dir, 'ids.json');
  writeFileSync(ids, JSON.stringify(prompt));
  const out = execFileSync('/usr/bin/python3', [TORCH_REFERENCE, '--check', folder, ids], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  return JSON.parse(out) as Checked;
}

function logitsOf(model: TransformerModel, prompt: number[]): Float32Array {
  const t = model.forwardLogits(Int32Array.from(prompt), new Uint8Array(prompt.length).fill(1), 1, prompt.length);
  const out = t.dataSync() as Float32Array;
  t.dispose();
  return out;
}

function relative(ours: Float32Array, ref: readonly number[]): number {
  let diff = 0;
  let scale = 0;
  ref.forEach((x, i) => {
    diff = Math.max(diff, Math.abs((ours[i] as number) - x));
    scale = Math.max(scale, Math.abs(x));
  });
  return diff / scale;
}

async function checkpointOf(stack: PolicyStack, config: ReturnType<typeof resolveConfig>, runDir: string): Promise<string> {
  mkdirSync(runDir, { recursive: true });
  await saveRunConfig(runDir, config);
  const state = await stack.trainer.getState();
  const optimizer = new Map(state.optimizer.map((a) => [a.name, { shape: a.shape, data: a.data }]));
  return saveCheckpoint(runDir, checkpointContentOf(config, stack, 1, optimizer, { policyVersion: 1 }));
}

describe("a checkpoint of turnwise's own model", () => {
  it('is a Hugging Face folder generate can use: ids, eos, chat template, the same logits', async () => {
    const config = resolveConfig(parseConfig({ seed: 2, model: { dModel: 32, nLayers: 1, nHeads: 2, ffnHidden: 48 }, tokenizer: { vocabSize: 300, corpusEpisodes: 40 } }));
    const stack = await buildPolicyStack(config, getEnvironmentSpec('babyai'), null);
    try {
      const ckpt = await checkpointOf(stack, config, join(dir, 'own-run'));
      const prompt = Array.from(stack.text.context({ instruction: 'go to the red ball', pastTurns: [], observationText: 'You see a red ball.' }));
      const checked = referenceCheck(ckpt, prompt);
      const end = stack.text.endTokenId;
      expect(checked.config).toMatchObject({ architectures: ['LlamaForCausalLM'], model_type: 'llama', eos_token_id: end, bos_token_id: 1, pad_token_id: 0, vocab_size: stack.text.vocabSize });
      expect(checked.generation_config).toMatchObject({ eos_token_id: end, bos_token_id: 1, pad_token_id: 0 });
      expect(checked.tokenizer_config).toMatchObject({ eos_token: '<|end|>', bos_token: '<|bos|>', pad_token: '<|pad|>' });
      expect(checked.has_chat_template).toBe(true);
      expect(relative(logitsOf(stack.learnerModel, prompt), checked.logits)).toBeLessThan(1e-4);
    } finally {
      await stack.close();
    }
  }, 120_000);
});

describe('a LoRA run of a pretrained model', () => {
  it('merges into a plain model folder with the base tokenizer files and the adapted logits', async () => {
    // A tiny "pretrained" chat model: the SmolLM2-style fixture tokenizer and random weights.
    const base = join(dir, 'base');
    mkdirSync(base);
    const fixture = join(import.meta.dirname, '..', 'models', 'chat', 'fixtures', 'smollm2');
    for (const f of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) copyFileSync(join(fixture, f), join(base, f));
    const shape = { vocabSize: 544, dModel: 32, nLayers: 2, nHeads: 4, nKvHeads: 2, ffnHidden: 64, maxContext: 512, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: true, architecture: 'llama' as const };
    const pretrained = new TransformerModel(shape, Rng.fromSeed(5));
    writeFileSync(join(base, 'config.json'), JSON.stringify(writeHfConfig(shape, { bos: 1, eos: [2], pad: 2 })));
    const records: Parameters<typeof writeSafetensors>[1] = {};
    for (const [name, w] of pretrained.namedWeights()) records[name] = { dtype: 'F32', shape: w.shape, data: w.data };
    await writeSafetensors(join(base, 'model.safetensors'), records);
    pretrained.dispose();

    const config = resolveConfig(parseConfig({ seed: 4, model: { from: base, lora: { rank: 4, alpha: 8, dropout: 0 }, maxContext: 256 }, algorithm: { klCoef: 0.01 } }));
    const stack = await buildPolicyStack(config, getEnvironmentSpec('babyai'), null);
    try {
      // Non-zero adapters (a fresh B is zero, which would merge to nothing).
      const rng = Rng.fromSeed(9);
      stack.learnerModel.loadNamedWeights(new Map([...stack.learnerModel.namedWeights()].map(([name, w]) => [name, { shape: w.shape, data: Float32Array.from(w.data, () => 0.2 * rng.normal()) }])));
      const runDir = join(dir, 'lora-run');
      const ckpt = await checkpointOf(stack, config, runDir);
      const out = join(dir, 'merged');
      const exported = await exportModelFolder(runDir, out);
      expect(exported).toMatchObject({ merged: true, step: 1 });
      expect(exported.files).toEqual(['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json']);
      const prompt = Array.from(stack.text.context({ instruction: 'go to the red ball', pastTurns: [], observationText: 'a wall' })).slice(0, 40);
      const checked = referenceCheck(out, prompt);
      expect(checked.config).toMatchObject({ architectures: ['LlamaForCausalLM'], eos_token_id: 2, bos_token_id: 1, pad_token_id: 2, num_key_value_heads: 2, tie_word_embeddings: true });
      expect(checked.tokenizer_config).toMatchObject({ eos_token: '<|im_end|>' });
      expect(checked.has_chat_template).toBe(true);
      expect(checked.tensors.some((t) => t.includes('lora'))).toBe(false);
      const adapted = logitsOf(stack.learnerModel, prompt);
      expect(relative(adapted, checked.logits)).toBeLessThan(1e-4);
      const baseLogits = stack.learnerModel.withAdaptersOff(() => logitsOf(stack.learnerModel, prompt));
      expect(relative(baseLogits, checked.logits)).toBeGreaterThan(1e-3); // the adapters changed the model
      // The checkpoint itself is PEFT's layout on the base: adapter files, the base's config.
      const { readAdapterFiles } = await import('../../src/models/lora/peft-files.js');
      const adapter = await readAdapterFiles(ckpt);
      expect(adapter.spec).toMatchObject({ rank: 4, alpha: 8 });
      expect(adapter.baseModel).toBe(base);
    } finally {
      await stack.close();
    }
  }, 120_000);
});

describe('merging a LoRA run of a BF16 base', () => {
  it("keeps the base's max_position_embeddings and dtype: BF16 weights rounded as PyTorch casts, half the size of float32", async () => {
    const base = join(dir, 'bf16-base');
    mkdirSync(base);
    const fixture = join(import.meta.dirname, '..', 'models', 'chat', 'fixtures', 'smollm2');
    for (const f of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) copyFileSync(join(fixture, f), join(base, f));
    const shape = { vocabSize: 544, dModel: 32, nLayers: 2, nHeads: 4, nKvHeads: 2, ffnHidden: 64, maxContext: 8192, ropeTheta: 100000, rmsNormEps: 1e-5, tieEmbeddings: true, architecture: 'llama' as const };
    const pretrained = new TransformerModel(shape, Rng.fromSeed(6));
    writeFileSync(join(base, 'config.json'), JSON.stringify({ ...writeHfConfig(shape, { bos: 1, eos: [2], pad: 2 }), torch_dtype: 'bfloat16' }));
    const records: Parameters<typeof writeSafetensors>[1] = {};
    for (const [name, w] of pretrained.namedWeights()) records[name] = { dtype: 'BF16', shape: w.shape, data: toBfloat16(w.data) };
    await writeSafetensors(join(base, 'model.safetensors'), records);
    pretrained.dispose();

    const config = resolveConfig(parseConfig({ seed: 4, model: { from: base, lora: { rank: 4, alpha: 8, dropout: 0 }, maxContext: 512 } }));
    const stack = await buildPolicyStack(config, getEnvironmentSpec('babyai'), null);
    try {
      const rng = Rng.fromSeed(10);
      stack.learnerModel.loadNamedWeights(new Map([...stack.learnerModel.namedWeights()].map(([name, w]) => [name, { shape: w.shape, data: Float32Array.from(w.data, () => 0.2 * rng.normal()) }])));
      const runDir = join(dir, 'bf16-run');
      await checkpointOf(stack, config, runDir);
      const out = join(dir, 'bf16-merged');
      const exported = await exportModelFolder(runDir, out);
      expect(exported.dtype).toBe('BF16');
      const hf = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
      expect(hf.max_position_embeddings).toBe(8192); // the base's, not the run's 512
      expect(hf.torch_dtype).toBe('bfloat16');
      const { tensors } = await readSafetensors(join(out, 'model.safetensors'));
      const merged = stack.learnerModel.mergedNamedWeights();
      for (const [name, w] of merged) {
        // Read back as float32: exactly the merged weights rounded to bfloat16.
        const back = tensors[name]?.data as Float32Array;
        const rounded = new Float32Array(new Uint32Array(Array.from(toBfloat16(w.data), (h) => h << 16)).buffer);
        expect(Array.from(back), name).toEqual(Array.from(rounded));
      }
      const f32Bytes = [...merged.values()].reduce((n, w) => n + 4 * w.data.length, 0);
      expect(statSync(join(out, 'model.safetensors')).size).toBeLessThan(0.55 * f32Bytes);
      // PyTorch reads the folder and computes the logits of turnwise's own load of it.
      const prompt = Array.from(stack.text.context({ instruction: 'go to the red ball', pastTurns: [], observationText: 'a wall' })).slice(0, 40);
      const checked = referenceCheck(out, prompt);
      expect(checked.config).toMatchObject({ torch_dtype: 'bfloat16', eos_token_id: 2 });
      const reloaded = await loadHfModel(out);
      expect(relative(logitsOf(reloaded, prompt), checked.logits)).toBeLessThan(1e-4);
      reloaded.dispose();
    } finally {
      await stack.close();
    }
  }, 180_000);
});

