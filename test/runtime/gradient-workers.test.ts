import { describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { packOptionsOf } from '../../src/learner/train-options.js';
import { trainStepOptionsOf } from '../../src/runtime/algorithm-setup.js';
import { describeGradientWorkers, gradientWorkersOf, microBatchCutsOf } from '../../src/runtime/gradient-workers.js';

const resolved = (input: Record<string, unknown> = {}) => resolveConfig(parseConfig(input));

describe('train.dataParallel auto', () => {
  it('is the default, and gives one gradient worker per core (at most 4) to an own model in mode sync', () => {
    const config = resolved();
    expect(config.train.dataParallel).toBe('auto');
    expect(gradientWorkersOf(config, 2)).toEqual({ count: 2, reason: null });
    expect(gradientWorkersOf(config, 3).count).toBe(3);
    expect(gradientWorkersOf(config, 64).count).toBe(4);
    expect(gradientWorkersOf(config, 1)).toEqual({ count: 1, reason: 'one core' });
    expect(describeGradientWorkers(config, 2)).toBe('learner: 2 gradient workers (train.dataParallel auto)');
  });

  it('keeps a count set by hand as it is', () => {
    expect(gradientWorkersOf(resolved({ train: { dataParallel: 1 } }), 8)).toEqual({ count: 1, reason: null });
    expect(gradientWorkersOf(resolved({ train: { dataParallel: 3 } }), 2).count).toBe(3);
    expect(describeGradientWorkers(resolved({ train: { dataParallel: 1 } }), 2)).toBe('learner: main thread (train.dataParallel 1)');
  });

  it('resolves to 1, and is not refused, where gradient workers do not exist or would take the sampler’s cores', () => {
    // A pretrained model: an explicit 2 is refused when the models open (pretrained-stack.ts); auto is 1.
    const pretrained = resolved({ model: { from: 'models/somewhere' } });
    expect(gradientWorkersOf(pretrained, 8)).toEqual({ count: 1, reason: 'a pretrained model (model.from)' });
    // A Tinker engine: an explicit 2 is refused at parse time (config-engine.test.ts); auto parses and is 1.
    const tinker = resolved({ model: { from: 'models/qwen3', engine: 'tinker', tinker: { url: 'http://127.0.0.1:8000' }, lora: { rank: 8 } }, sampling: { constrained: false, temperature: 1 } });
    expect(gradientWorkersOf(tinker, 8).count).toBe(1);
    expect(describeGradientWorkers(tinker, 8)).toBe('learner: model.engine tinker');
    expect(gradientWorkersOf(resolved({ mode: 'one-step-off' }), 8).count).toBe(1);
    expect(describeGradientWorkers(resolved({ mode: 'async' }), 8)).toMatch(/^learner: main thread \(train\.dataParallel auto: mode async/);
  });

  it("refuses what is neither a positive integer nor 'auto', naming the field", () => {
    expect(() => parseConfig({ train: { dataParallel: 0 } })).toThrow(/train\.dataParallel/);
    expect(() => parseConfig({ train: { dataParallel: 'all' } })).toThrow(/train\.dataParallel/);
  });
});

describe('algorithm.microBatchMultiple', () => {
  it('auto: 4 for an own model, 1 for a pretrained one; the work estimate from the model shape', () => {
    expect(resolved().algorithm.microBatchMultiple).toBe('auto');
    expect(microBatchCutsOf(resolved())).toEqual({ microBatchMultiple: 4, attentionBreakEven: 2 * 64 + 1.5 * 172 });
    expect(microBatchCutsOf(resolved({ model: { dModel: 128, ffnHidden: 341 } })).attentionBreakEven).toBe(Math.round(256 + 1.5 * 341));
    expect(microBatchCutsOf(resolved({ model: { from: 'models/somewhere' } }))).toEqual({ microBatchMultiple: 1, attentionBreakEven: Number.POSITIVE_INFINITY });
  });

  it('reaches the trainer: trainStepOptionsOf and the packing read it', () => {
    const options = trainStepOptionsOf(resolved());
    expect(options).toMatchObject({ microBatchMultiple: 4, attentionBreakEven: 386 });
    expect(packOptionsOf(options)).toEqual({ maxTokensPerBatch: 8192, microBatchMultiple: 4, attentionBreakEven: 386 });
    expect(trainStepOptionsOf(resolved({ algorithm: { microBatchMultiple: 2 } })).microBatchMultiple).toBe(2);
  });

  it('keeps a multiple set by hand, and refuses what is neither a positive integer nor auto, naming the field', () => {
    expect(microBatchCutsOf(resolved({ algorithm: { microBatchMultiple: 1 } })).microBatchMultiple).toBe(1);
    expect(microBatchCutsOf(resolved({ model: { from: 'models/somewhere' }, algorithm: { microBatchMultiple: 2 } })).microBatchMultiple).toBe(2);
    expect(() => parseConfig({ algorithm: { microBatchMultiple: 0 } })).toThrow(/algorithm\.microBatchMultiple/);
    expect(() => parseConfig({ algorithm: { microBatchMultiple: 'workers' } })).toThrow(/algorithm\.microBatchMultiple/);
  });
});
