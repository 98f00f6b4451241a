import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, resolveConfig } from '../../src/core/config.js';
import { parseOverride } from '../../src/core/config/overrides.js';
import { InvalidConfigError } from '../../src/core/errors.js';
import { createBabyAICatalog } from '../../src/envs/babyai/catalog.js';
import { selectBackend } from '../../src/backend/select.js';
import type { HfModelInfo } from '../../src/models/hf/hf-model.js';
import { parameterCount } from '../../src/models/memory-estimate.js';
import type { TransformerConfig } from '../../src/models/transformer/model.js';
import { checkMemory, loraSpecOf, runShapeOf } from '../../src/runtime/pretrained-stack.js';

const PATH = 'configs/babyai-llm-lora.yaml';

/** The shapes of the two models the config names (their config.json files). */
const SMOLLM2_135M: TransformerConfig = { vocabSize: 49152, dModel: 576, nLayers: 30, nHeads: 9, nKvHeads: 3, headDim: 64, ffnHidden: 1536, maxContext: 8192, ropeTheta: 100000, rmsNormEps: 1e-5, tieEmbeddings: true, architecture: 'llama' };
const QWEN25_05B: TransformerConfig = { vocabSize: 151936, dModel: 896, nLayers: 24, nHeads: 14, nKvHeads: 2, headDim: 64, ffnHidden: 4864, maxContext: 32768, ropeTheta: 1000000, rmsNormEps: 1e-6, tieEmbeddings: true, qkvBias: true, architecture: 'qwen2' };
const infoOf = (config: TransformerConfig, folder: string): HfModelInfo => ({ config, dtype: 'bfloat16', tokenIds: { bos: null, eos: [2], pad: null }, notes: [], folder, weights: { files: ['model.safetensors'], bytes: 0, dtypes: new Map() }, parameters: parameterCount(config) });

beforeAll(async () => {
  await selectBackend('wasm');
});

describe(PATH, () => {
  it('parses as a free-text chat run of a pretrained model with LoRA on BabyAI', () => {
    const config = resolveConfig(loadConfig(PATH));
    expect(config.model.from).toBe('path/to/SmolLM2-135M-Instruct');
    expect(config.model.lora).not.toBeNull();
    expect(config.context.format).toBe('chat');
    expect(config.sampling.constrained).toBe(false);
    expect(config.sampling.maxActionTokens).toBeGreaterThanOrEqual(48); // room for "Thought: … Action: …"
    expect(config.algorithm.name).toBe('grpo');
    const catalog = createBabyAICatalog({ settings: config.env.settings });
    expect(config.train.evalTasks).toBeLessThanOrEqual(catalog.indices('test').length);
    // The user's model path goes in with --set, as docs/llm-agents.md shows.
    expect(resolveConfig(loadConfig(PATH, [parseOverride('model.from=models/SmolLM2-135M-Instruct')])).model.from).toBe('models/SmolLM2-135M-Instruct');
  });

  it("fits SmolLM2-135M-Instruct and Qwen2.5-0.5B-Instruct in the wasm backend's heaps, as its header says, and refuses a model past them", () => {
    const config = resolveConfig(loadConfig(PATH));
    const smol = infoOf(SMOLLM2_135M, 'models/SmolLM2-135M-Instruct');
    const line = checkMemory(smol, config, runShapeOf(smol, config), loraSpecOf(config));
    // Without measured first prompts the plan takes whole-context rows: an upper bound of what the run
    // prints (1.04 GiB for the learner, 831 MiB for the sampler worker).
    expect(line).toMatch(/^memory needed: learner heap: .*= 1\.\d+ GiB(; Adam's moments \d+ MiB outside the heap)?; each sampler worker's heap: [^;]*= ([5-9]\d\d MiB|1\.\d+ GiB); KV caches [\d.]+ [MG]iB outside the heaps/);
    // Qwen2.5-0.5B: 3.00 GiB for the learner and 2.57 GiB for the sampler worker (the KV caches are JS memory).
    const qwen = infoOf(QWEN25_05B, 'models/Qwen2.5-0.5B-Instruct');
    expect(checkMemory(qwen, config, runShapeOf(qwen, config), loraSpecOf(config))).toMatch(/learner heap: [^;]*= 3\.\d+ GiB.*each sampler worker's heap: [^;]*= 2\.\d+ GiB/);
    // Twice Qwen2.5-0.5B's width (d 1792, 28 / 4 heads) does not fit the learner's heap.
    const wide = infoOf({ ...QWEN25_05B, dModel: 1792, nHeads: 28, nKvHeads: 4 }, 'models/wide');
    expect(() => checkMemory(wide, config, runShapeOf(wide, config), loraSpecOf(config))).toThrow(InvalidConfigError);
  });
});
