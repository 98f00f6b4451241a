/**
 * scripts/make-pretrained-shape.ts's `--shape qwen2.5-0.5b` folder reads back as Qwen2.5-0.5B's
 * shape (one layer here, to keep it small: every width, the 151,936-id vocabulary and the tokenizer
 * are the real ones), and an unknown shape is refused by name.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { QWEN25_05B_SHAPE, writePretrainedShape } from '../../../scripts/make-pretrained-shape.js';
import { inspectHfModel } from '../../../src/models/hf/hf-model.js';
import { parameterCount } from '../../../src/models/memory-estimate.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-qwen-shape-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('make-pretrained-shape --shape qwen2.5-0.5b', () => {
  it('writes a folder that reads back with Qwen2.5-0.5B widths, biases and vocabulary', async () => {
    const folder = join(dir, 'qwen');
    const report = await writePretrainedShape({ folder, shape: 'qwen2.5-0.5b', layers: 1 });
    const info = await inspectHfModel(folder);
    const expected = { ...QWEN25_05B_SHAPE, nLayers: 1 };
    expect(info.config).toMatchObject({ architecture: 'qwen2', vocabSize: 151936, dModel: 896, nLayers: 1, nHeads: 14, nKvHeads: 2, ffnHidden: 4864, qkvBias: true, tieEmbeddings: true, ropeTheta: 1000000 });
    expect(info.parameters).toBe(parameterCount(expected));
    expect(report.parameters).toBe(parameterCount(expected));
    const tokenizer = JSON.parse(readFileSync(join(folder, 'tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } };
    expect(Object.keys(tokenizer.model.vocab)).toHaveLength(151936);
  }, 120_000);

  it('refuses a shape it does not know, naming the ones it does', async () => {
    await expect(writePretrainedShape({ folder: join(dir, 'x'), shape: 'gpt-9' })).rejects.toThrow(/shape: expected one of smollm2-135m, qwen2.5-0.5b, got "gpt-9"/);
  });
});
