import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { tf } from '../../src/backend/tf.js';
import { loadCheckpoint, resolveCheckpointDir, saveCheckpoint } from '../../src/models/checkpoint.js';
import { BpeTokenizer, trainBpe } from '../../src/models/tokenizer/index.js';
import { TransformerModel } from '../../src/models/transformer/model.js';
import { fromHfConfig } from '../../src/models/hf/hf-config.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-ckpt-'));
beforeAll(async () => {
  await tf.setBackend('cpu');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const shape = { vocabSize: 300, dModel: 16, nLayers: 2, nHeads: 2, ffnHidden: 40, maxContext: 32, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: false };

function logits(model: TransformerModel, ids: Int32Array): Float32Array {
  const out = model.forwardLogits(ids, new Uint8Array(ids.length).fill(1), 1, ids.length);
  const data = out.dataSync().slice() as Float32Array;
  out.dispose();
  return data;
}

describe('checkpoints (Hugging Face layout)', () => {
  it('saves and reloads a model that gives bit-identical logits, with its tokenizer and state', async () => {
    const model = new TransformerModel(shape, Rng.fromSeed(4));
    const tokenizer = trainBpe(['go to the red ball', 'pick up the blue key', 'go to the red ball again'], { vocabSize: 300 });
    const optimizer = new Map([['adam/m/0', { shape: [2], data: new Float32Array([0.5, -1]) }]]);
    await saveCheckpoint(dir, {
      step: 7,
      hfConfig: model.toHfConfig(),
      weights: model.namedWeights(),
      tokenizerJson: tokenizer.toJSON(),
      optimizer,
      state: { policyVersion: 7, horizon: { stage: 1, completedSteps: 7 } },
    });
    const ckptDir = await resolveCheckpointDir(dir);
    expect(ckptDir).toBe(join(dir, 'checkpoints', 'step-000007'));
    const loaded = await loadCheckpoint(ckptDir);
    const restored = new TransformerModel(fromHfConfig(loaded.hfConfig as Record<string, unknown>), Rng.fromSeed(99));
    restored.loadNamedWeights(loaded.weights);
    const ids = Int32Array.from([1, 20, 33, 7, 250, 3]);
    expect(logits(restored, ids)).toEqual(logits(model, ids));
    expect(BpeTokenizer.fromJSON(loaded.tokenizerJson).encode('go to the red ball')).toEqual(tokenizer.encode('go to the red ball'));
    expect(Array.from(loaded.optimizer.get('adam/m/0')?.data ?? [])).toEqual([0.5, -1]);
    expect(loaded.state).toMatchObject({ step: 7, policyVersion: 7, horizon: { stage: 1, completedSteps: 7 } });
    expect(JSON.parse(readFileSync(join(ckptDir, 'config.json'), 'utf8')).architectures).toEqual(['LlamaForCausalLM']);
    model.dispose();
    restored.dispose();
  });

  it('names the folder at fault when neither a run nor a checkpoint is given', async () => {
    await expect(resolveCheckpointDir(join(dir, 'nope'))).rejects.toThrow(CheckpointError);
    await expect(resolveCheckpointDir(join(dir, 'nope'))).rejects.toThrow(/nope/);
  });

  it('rejects a checkpoint whose state file is missing its step', async () => {
    const broken = join(dir, 'checkpoints', 'step-000007');
    writeFileSync(join(broken, 'trainer_state.json'), '{}');
    await expect(loadCheckpoint(broken)).rejects.toThrow(/step/);
  });
});
