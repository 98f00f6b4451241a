/**
 * The one-page reference loop (src/runtime/reference-loop.ts) against the real assembly
 * (`trainRun`: actors on the in-process bus, inference worker threads, run store, checkpoints) on
 * the quickstart config, shortened to 2 steps and 16 held-out tasks. The one runtime override,
 * `runtime.samplerMaxBatch: 1`, makes `trainRun`'s sampler decode each request alone, as the
 * reference does: a batched request rounds float32 differently in the last bit, so with the default
 * batch of 128 the weights agree only to about 1e-7.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, parseOverride, resolveConfig } from '../../src/core/config.js';
import { resolveCheckpointDir } from '../../src/models/checkpoint.js';
import { readSafetensors } from '../../src/models/safetensors.js';
import { referenceTrain } from '../../src/runtime/reference-loop.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { RunStore } from '../../src/store/run-store.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-reference-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SHORT = ['train.steps=2', 'train.evalEvery=1', 'train.evalTasks=16', 'train.checkpointEvery=2', 'runtime.samplerMaxBatch=1'];

function bytes(data: Float32Array): Buffer {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

describe('the reference loop', () => {
  it('ends with weights bit-identical to trainRun on the quickstart config, through the same evaluations and steps', async () => {
    const config = resolveConfig(loadConfig('configs/babyai-grpo.yaml', SHORT.map(parseOverride)));
    const runDir = join(dir, 'run');
    const run = await trainRun({ config, runDir });
    expect(run.status).toBe('finished');
    const reference = await referenceTrain(config);

    // Step by step first, so a divergence is reported where it starts.
    const store = RunStore.open(runDir, { readonly: true });
    const rollouts = store.metricsSeries('rollout/successRate').map((p) => p.value);
    const gradNorms = store.metricsSeries('optim/gradNorm').map((p) => p.value);
    store.close();
    expect(reference.steps.map((s) => s.successRate)).toEqual(rollouts);
    expect(reference.steps.map((s) => s.gradNorm)).toEqual(gradNorms);
    expect(reference.evals).toEqual(run.evals.map(({ step, successRate }) => ({ step, successRate })));
    expect(reference.evals.map((e) => e.step)).toEqual([0, 1, 2]);

    const { tensors } = await readSafetensors(join(await resolveCheckpointDir(runDir), 'model.safetensors'));
    expect([...reference.weights.keys()].sort()).toEqual(Object.keys(tensors).sort());
    for (const [name, weight] of reference.weights) {
      const stored = tensors[name];
      expect(stored?.shape, name).toEqual(weight.shape);
      expect(bytes(weight.data).equals(bytes(stored?.data as Float32Array)), `${name} differs`).toBe(true);
    }
    // Training changed them: the comparison is not between two untouched initialisations.
    expect(gradNorms.every((n) => n > 0)).toBe(true);
  });
});
