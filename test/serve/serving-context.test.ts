/**
 * The context `turnwise serve` picks by itself (issue #32): SmolLM2-135M's own 8,192 tokens need
 * about 6 GiB to score a full-context prompt on the wasm backend, so the server starts at the
 * longest context that fits and says so; `--max-context` is honoured up to the model's own limit.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../src/backend/select.js';
import type { HfModelInfo } from '../../src/models/hf/hf-model.js';
import { parameterCount, WASM_HEAP_BYTES } from '../../src/models/memory-estimate.js';
import type { TransformerConfig } from '../../src/models/transformer/model.js';
import { serveMemoryBytes, servingContext } from '../../src/serve/load-model.js';

const SMOLLM2: TransformerConfig = { vocabSize: 49152, dModel: 576, nLayers: 30, nHeads: 9, nKvHeads: 3, headDim: 64, ffnHidden: 1536, maxContext: 8192, ropeTheta: 100000, rmsNormEps: 1e-5, tieEmbeddings: true, architecture: 'llama' };
const info: HfModelInfo = { config: SMOLLM2, dtype: 'bfloat16', tokenIds: { bos: 1, eos: [2], pad: 2 }, notes: [], folder: 'models/SmolLM2-135M-Instruct', weights: { files: ['model.safetensors'], bytes: 0, dtypes: new Map() }, parameters: parameterCount(SMOLLM2) };
const KV = 128 * 2 ** 20;

beforeAll(async () => {
  await selectBackend('wasm');
});

describe('the context serve chooses', () => {
  it("starts SmolLM2-135M at the longest context that fits the wasm heap, and says what it chose and why", () => {
    expect(serveMemoryBytes(info, SMOLLM2, KV).total).toBeGreaterThan(WASM_HEAP_BYTES);
    const { maxContext, note } = servingContext(info, undefined, KV);
    expect(maxContext).toBe(2048);
    expect(serveMemoryBytes(info, { ...SMOLLM2, maxContext }, KV).total).toBeLessThanOrEqual(WASM_HEAP_BYTES);
    expect(serveMemoryBytes(info, { ...SMOLLM2, maxContext: 2 * maxContext }, KV).total).toBeGreaterThan(WASM_HEAP_BYTES);
    expect(note).toMatch(/^context: 2048 tokens, the longest .*the model's own 8192 would need [\d.]+ GiB.*--max-context/);
  });

  it('honours --max-context up to the model limit and refuses more, naming the flag', () => {
    expect(servingContext(info, 1024, KV)).toEqual({ maxContext: 1024, note: 'context: 1024 tokens (--max-context; the model\'s own is 8192)' });
    expect(() => servingContext(info, 10000, KV)).toThrow(/--max-context.*10000 is more than .*own limit of 8192/);
  });
});
