/**
 * Training a pretrained Hugging Face model (`model.from`) end to end with the real runtime: a
 * tiny chat model (the SmolLM2-style fixture tokenizer and ChatML template, random weights in HF
 * layout), LoRA with dropout, AgentGym's conversation layout. A resumed run continues the same
 * curves and ends with bit-identical adapters; PPO trains a value head on the pretrained trunk.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig, type TurnwiseConfigInput } from '../../src/core/config.js';
import { Rng } from '../../src/core/rng.js';
import { selectBackend } from '../../src/backend/select.js';
import { writeHfConfig } from '../../src/models/hf/hf-config.js';
import { writeSafetensors } from '../../src/models/safetensors.js';
import { TransformerModel } from '../../src/models/transformer/model.js';
import { loadRunConfig } from '../../src/runtime/run-folder.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-pretrained-'));
const folder = join(dir, 'tiny-chat');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  await selectBackend('wasm');
  mkdirSync(folder);
  const fixture = join(import.meta.dirname, '..', 'models', 'chat', 'fixtures', 'smollm2');
  for (const f of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) copyFileSync(join(fixture, f), join(folder, f));
  // Vocabulary padded past the tokenizer's 539 ids, as real models pad theirs.
  const shape = { vocabSize: 544, dModel: 32, nLayers: 1, nHeads: 4, nKvHeads: 2, ffnHidden: 64, maxContext: 4096, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: true, architecture: 'llama' as const };
  const model = new TransformerModel(shape, Rng.fromSeed(11));
  writeFileSync(join(folder, 'config.json'), JSON.stringify(writeHfConfig(shape, { bos: 1, eos: [2], pad: 2 })));
  const records: Parameters<typeof writeSafetensors>[1] = {};
  for (const [name, w] of model.namedWeights()) records[name] = { dtype: 'F32', shape: w.shape, data: w.data };
  await writeSafetensors(join(folder, 'model.safetensors'), records);
  model.dispose();
});

const METRICS = ['rollout/successRate', 'rollout/meanTurns', 'loss/policy', 'loss/approxKl', 'optim/gradNorm', 'policy/version'];

function series(runDir: string, names = METRICS): Record<string, number[]> {
  const store = RunStore.open(runDir, { readonly: true });
  const out: Record<string, number[]> = {};
  for (const name of names) out[name] = store.metricsSeries(name).map((p) => p.value);
  store.close();
  return out;
}

const base = (name: string, steps: number, algorithm: Record<string, unknown> = {}): TurnwiseConfigInput => ({
  seed: 5,
  run: { dir, name },
  env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
  model: { from: folder, lora: { rank: 4, alpha: 8, dropout: 0.1 }, maxContext: 2048 },
  sampling: { constrained: true, maxActionTokens: 16 },
  algorithm: { tasksPerStep: 2, groupSize: 4, lr: 0.01, klCoef: 0.05, maxTokensPerMicroBatch: 4096, ...algorithm },
  horizon: { schedule: 'fixed', horizon: 2 },
  train: { steps, evalEvery: 0, evalTasks: 4, checkpointEvery: 2 },
});

describe('training a pretrained model with LoRA', () => {
  it('resumes to the same curves and bit-identical adapters (N + resume + N = 2N)', async () => {
    const straight = await trainRun({ config: resolveConfig(parseConfig(base('straight', 4))), runDir: join(dir, 'straight') });
    expect(straight.status).toBe('finished');
    await trainRun({ config: resolveConfig(parseConfig(base('resumed', 2))), runDir: join(dir, 'resumed') });
    const config = await loadRunConfig(join(dir, 'resumed'), (c) => ({ ...c, train: { ...c.train, steps: 4 } }));
    const second = await trainRun({ config, resumeDir: join(dir, 'resumed') });
    expect(second.completedSteps).toBe(4);
    const a = series(join(dir, 'straight'));
    expect(a['optim/gradNorm']?.some((g) => g > 0)).toBe(true); // it did learn something
    expect(series(join(dir, 'resumed'))).toEqual(a);
    const adapters = (runDir: string) => readFileSync(join(runDir, 'checkpoints', 'step-000004', 'adapter_model.safetensors'));
    expect(adapters(join(dir, 'resumed')).equals(adapters(join(dir, 'straight')))).toBe(true);
    // The checkpoint is the adapters on the base: no full model copy.
    expect(() => readFileSync(join(dir, 'straight', 'checkpoints', 'step-000004', 'model.safetensors'))).toThrow();
  }, 300_000);

  it('trains PPO with a value head on the pretrained trunk', async () => {
    const config = resolveConfig(parseConfig({ ...base('ppo', 2, { name: 'ppo', tasksPerStep: 4, critic: { trunk: 'shared' } }), horizon: { schedule: 'fixed', horizon: 4 } }));
    const result = await trainRun({ config, runDir: join(dir, 'ppo') });
    expect(result.status).toBe('finished');
    const s = series(join(dir, 'ppo'), ['loss/value', 'rollout/successRate']);
    // Some episodes succeed (random constrained play in GoToRedBall), so there are returns to fit.
    expect(s['rollout/successRate']?.some((r) => r > 0)).toBe(true);
    expect(s['loss/value']).toHaveLength(2);
    expect(s['loss/value']?.every((v) => Number.isFinite(v) && v > 0)).toBe(true);
  }, 300_000);
});
