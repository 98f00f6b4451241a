/**
 * A pretrained model's context against the environment's prompts (issue #32): a context that
 * cannot hold a first prompt and a reply is refused before any weight is read, naming the tokens;
 * a run where most episodes still end by length says so at the step and in its result.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig, type TurnwiseConfigInput } from '../../src/core/config.js';
import { InvalidConfigError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { selectBackend } from '../../src/backend/select.js';
import { writeHfConfig } from '../../src/models/hf/hf-config.js';
import { writeSafetensors } from '../../src/models/safetensors.js';
import { TransformerModel } from '../../src/models/transformer/model.js';
import type { RunEvent } from '../../src/runtime/run-events.js';
import { trainRun } from '../../src/runtime/train/train-run.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-context-'));
const folder = join(dir, 'tiny-chat');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  await selectBackend('wasm');
  mkdirSync(folder);
  const fixture = join(import.meta.dirname, '..', 'models', 'chat', 'fixtures', 'smollm2');
  for (const f of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) copyFileSync(join(fixture, f), join(folder, f));
  const shape = { vocabSize: 544, dModel: 32, nLayers: 1, nHeads: 4, nKvHeads: 2, ffnHidden: 64, maxContext: 4096, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: true, architecture: 'llama' as const };
  const model = new TransformerModel(shape, Rng.fromSeed(3));
  writeFileSync(join(folder, 'config.json'), JSON.stringify(writeHfConfig(shape, { bos: 1, eos: [2], pad: 2 })));
  const records: Parameters<typeof writeSafetensors>[1] = {};
  for (const [name, w] of model.namedWeights()) records[name] = { dtype: 'F32', shape: w.shape, data: w.data };
  await writeSafetensors(join(folder, 'model.safetensors'), records);
  model.dispose();
});

const configOf = (name: string, model: Record<string, unknown>, extra: Partial<TurnwiseConfigInput> = {}) =>
  resolveConfig(
    parseConfig({
      seed: 3,
      run: { dir, name },
      env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
      model: { from: folder, lora: { rank: 4, alpha: 8 }, ...model },
      sampling: { maxActionTokens: 16 },
      algorithm: { tasksPerStep: 2, groupSize: 2, maxTokensPerMicroBatch: 4096 },
      horizon: { schedule: 'fixed', horizon: 3 },
      train: { steps: 1, evalEvery: 0, checkpointEvery: 0 },
      runtime: { inferenceWorkers: 0 },
      ...extra,
    }),
  );

describe("a pretrained model's context", () => {
  it('refuses a context that cannot hold the first prompt and a reply, naming the tokens needed', async () => {
    const error = await trainRun({ config: configOf('short', { maxContext: 300 }), runDir: join(dir, 'short') }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidConfigError);
    const { path, detail } = error as InvalidConfigError;
    expect(path).toBe('model.maxContext');
    const [, longest, needed] = /first prompt is (\d+) tokens .*sampling\.maxActionTokens 16 = (\d+)/.exec(detail) ?? [];
    expect(Number(needed)).toBe(Number(longest) + 16);
    expect(Number(needed)).toBeGreaterThan(300);
    expect(detail).toMatch(/babyai_\d+'s first prompt/);
    expect(detail).toMatch(new RegExp(`raise model.maxContext to at least ${needed}`));
  });

  it('warns at the step and in the result when most episodes end by length', async () => {
    const events: RunEvent[] = [];
    // The first prompt fits, but the replies after it may take 20 tokens in all: turn 1 has no room.
    const config = configOf('by-length', { maxContext: 4096 }, { context: { history: 'full', chat: { maxResponseTokens: 20 } } });
    const result = await trainRun({ config, runDir: join(dir, 'by-length'), onEvent: (e) => events.push(e) });
    expect(result.status).toBe('finished');
    const alarm = events.find((e) => e.type === 'alarm' && e.name === 'lengthTruncation');
    expect(alarm).toMatchObject({ type: 'alarm', name: 'lengthTruncation', step: 1, action: 'warn' });
    expect(alarm?.type === 'alarm' && alarm.message).toMatch(/^4 of 4 episodes of step 1 ended by length/);
    expect(result.warnings?.[0]).toMatch(/^4 of 4 episodes ended by length/);
  });
});
