import { beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { InvalidConfigError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { nativeAdamAvailable } from '../../src/backend/native-adam.js';
import { selectBackend } from '../../src/backend/select.js';
import type { HfModelInfo } from '../../src/models/hf/hf-model.js';
import { parameterCount, WASM_HEAP_BYTES } from '../../src/models/memory-estimate.js';
import type { TransformerConfig } from '../../src/models/transformer/model.js';
import { checkMemory, loraSpecOf, openPretrainedModels } from '../../src/runtime/pretrained-stack.js';

/** SmolLM2-135M's shape. */
const SMOL: TransformerConfig = { vocabSize: 49152, dModel: 576, nLayers: 30, nHeads: 9, nKvHeads: 3, headDim: 64, ffnHidden: 1536, maxContext: 2048, ropeTheta: 100000, rmsNormEps: 1e-5, tieEmbeddings: true, architecture: 'llama' };
const info: HfModelInfo = { config: SMOL, dtype: 'bfloat16', tokenIds: { bos: 1, eos: [2], pad: null }, notes: [], folder: 'models/SmolLM2-135M-Instruct', weights: { files: ['model.safetensors'], bytes: 0, dtypes: new Map() }, parameters: parameterCount(SMOL) };

const configOf = (model: Record<string, unknown>, algorithm: Record<string, unknown> = {}, train: Record<string, unknown> = {}, runtime: Record<string, unknown> = {}) =>
  resolveConfig(parseConfig({ model: { from: info.folder, maxContext: 1024, ...model }, algorithm, train, runtime }));

function errorOf(fn: () => unknown): InvalidConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof InvalidConfigError) return err;
    throw err;
  }
  throw new Error('expected an InvalidConfigError');
}

beforeAll(async () => {
  await selectBackend('wasm');
});

describe('the memory check of a pretrained run', () => {
  it('refuses what cannot fit the wasm heap, with the estimate and what would fit', () => {
    const config = configOf({}, { maxTokensPerMicroBatch: 16384 });
    const error = errorOf(() => checkMemory(info, config, { ...SMOL, maxContext: 1024 }, null));
    expect(error.path).toBe('model.from');
    expect(error.detail).toMatch(/needs about [\d.]+ GiB .*more than the wasm backend's 4\.00 GiB heap/);
    expect(error.detail).toMatch(/algorithm\.maxTokensPerMicroBatch, now 16384/);
    expect(error.detail).toMatch(/tfjs-node/);
  });

  it("counts the KV caches outside the heaps: a large sampling batch fits the worker's heap and is refused by the machine's memory, naming runtime.samplerMaxBatch", () => {
    // 128 rows of a 512-token context: 2 x 128 x 512 x 45 KiB = 5.63 GiB of caches in flight, JS
    // memory; the worker's heap holds one prefill call of at most 4,096 tokens whatever the rows.
    const config = configOf({ lora: { rank: 16 }, maxContext: 512 }, { maxTokensPerMicroBatch: 512 }, { evalTasks: 128 }, { samplerMaxBatch: 128 });
    const shape = { ...SMOL, maxContext: 512 };
    const roomy = checkMemory(info, config, shape, loraSpecOf(config), null, { tensorBytes: WASM_HEAP_BYTES, machineBytes: 64 * 2 ** 30 });
    expect(roomy).toMatch(/; KV caches 5\.75 GiB outside the heaps \(128 MiB kept between turns \+ 5\.63 GiB in flight\)$/);
    const error = errorOf(() => checkMemory(info, config, shape, loraSpecOf(config), null, { tensorBytes: WASM_HEAP_BYTES, machineBytes: 6 * 2 ** 30 }));
    expect(error.path).toBe('runtime.samplerMaxBatch');
    expect(error.detail).toMatch(/the run needs about [\d.]+ GiB, more than this machine's 6\.00 GiB of memory: .*KV caches 5\.75 GiB outside the heaps/);
    expect(error.detail).toMatch(/runtime\.samplerMaxBatch 128/);
  });

  it('refuses a KV-cache budget past the machine, naming runtime.kvCacheMiB', () => {
    const config = configOf({ lora: { rank: 16 }, maxContext: 512 }, { maxTokensPerMicroBatch: 512 }, {}, { samplerMaxBatch: 16, kvCacheMiB: 32768 });
    const error = errorOf(() => checkMemory(info, config, { ...SMOL, maxContext: 512 }, loraSpecOf(config), null, { tensorBytes: WASM_HEAP_BYTES, machineBytes: 16 * 2 ** 30 }));
    expect(error.path).toBe('runtime.kvCacheMiB');
    expect(error.detail).toMatch(/more than this machine's 16\.00 GiB of memory: .*KV caches 32\.[\d]+ GiB outside the heaps \(32\.00 GiB kept between turns/);
  });

  it('accepts LoRA with small micro-batches and contexts, and says what it needs', () => {
    // Checkpointed layers: one layer's tape at a time, so a 512-token micro-batch needs well under the heap.
    const config = configOf({ lora: { rank: 16 }, maxContext: 512 }, { maxTokensPerMicroBatch: 512 }, {}, { samplerMaxBatch: 16 });
    const line = checkMemory(info, config, { ...SMOL, maxContext: 512 }, loraSpecOf(config));
    expect(line).toMatch(/^memory needed: learner heap: weights 513 MiB .*= [\d.]+ (GiB|MiB)(; Adam's moments \d+ MiB outside the heap)?; each sampler worker's heap: weights 513 MiB \+ adapters or copy 19 MiB \+ fused q\/k\/v 63 MiB \+ prefill \d+ MiB .*= [\d.]+ (GiB|MiB); KV caches [\d.]+ (GiB|MiB) outside the heaps \(128 MiB kept between turns/);
    expect(line.includes("Adam's moments"), "Adam's moments leave the heap on the native path alone").toBe(nativeAdamAvailable());
    expect(line).not.toMatch(/learner heap: [^;]*sampler copy/); // the sampler runs in its worker, on a base of its own
  });
});

describe('openPretrainedModels', () => {
  it("refuses turnwise's own context layout and gradient workers before reading anything", async () => {
    await expect(openPretrainedModels(configOf({}), null, Rng.fromSeed(1))).rejects.toThrow(/SmolLM2-135M-Instruct\/config\.json.*cannot read a Hugging Face config\.json/);
    const layout = resolveConfig(parseConfig({ model: { from: 'nowhere' }, context: { format: 'turnwise' } }));
    await expect(openPretrainedModels(layout, null, Rng.fromSeed(1))).rejects.toThrow(/context\.format/);
    const parallel = resolveConfig(parseConfig({ model: { from: 'nowhere' }, train: { dataParallel: 2 } }));
    await expect(openPretrainedModels(parallel, null, Rng.fromSeed(1))).rejects.toThrow(/train\.dataParallel/);
  });
});
