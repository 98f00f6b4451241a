/**
 * The context `turnwise serve` picks by itself (issues #31, #32): SmolLM2-135M's own 8,192 tokens
 * fit the 4 GiB wasm heap (the native attention keeps no `T x T` map), the Qwen2.5-0.5B shape's
 * 32,768 do not, so the server starts at the longest context that fits and says so; `--max-context`
 * is honoured up to the model's own limit, and one whose heap or KV caches cannot fit is refused
 * naming the flag. The KV caches are JS memory: they count against the machine, not the heap.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../src/backend/select.js';
import type { HfModelInfo } from '../../src/models/hf/hf-model.js';
import { parameterCount, WASM_HEAP_BYTES } from '../../src/models/memory-estimate.js';
import type { TransformerConfig } from '../../src/models/transformer/model.js';
import type { MemoryLimits } from '../../src/runtime/run-memory.js';
import { checkServeMemory, serveMemoryOf, servingContext } from '../../src/serve/load-model.js';
import { QWEN25_05B_SHAPE, SMOLLM2_135M_SHAPE } from '../../scripts/make-pretrained-shape.js';

const infoOf = (config: TransformerConfig, folder: string): HfModelInfo => ({ config, dtype: 'bfloat16', tokenIds: { bos: 1, eos: [2], pad: 2 }, notes: [], folder, weights: { files: ['model.safetensors'], bytes: 0, dtypes: new Map() }, parameters: parameterCount(config) });
const SMOLLM2 = infoOf(SMOLLM2_135M_SHAPE, 'models/SmolLM2-135M-Instruct');
const QWEN = infoOf(QWEN25_05B_SHAPE, 'models/qwen-shape');
const KV = 128 * 2 ** 20;
/** The wasm heap on a machine with room to spare: the heap alone decides. */
const WASM: MemoryLimits = { tensorBytes: WASM_HEAP_BYTES, machineBytes: 2 ** 40 };

beforeAll(async () => {
  await selectBackend('wasm');
});

describe('the context serve chooses', () => {
  it("starts SmolLM2-135M at its own 8,192 tokens, which fit the wasm heap, without a note", () => {
    expect(serveMemoryOf(SMOLLM2, 8192, KV).heap).toBeLessThanOrEqual(WASM_HEAP_BYTES);
    expect(servingContext(SMOLLM2, undefined, KV, { limits: WASM })).toEqual({ maxContext: 8192, note: null });
  });

  it('starts the Qwen2.5-0.5B shape at the longest context whose heap fits, 8192 of its 32,768 tokens, and says what it chose and why', () => {
    expect(serveMemoryOf(QWEN, 32768, KV).heap).toBeGreaterThan(WASM_HEAP_BYTES);
    const { maxContext, note } = servingContext(QWEN, undefined, KV, { limits: WASM });
    expect(maxContext).toBe(8192);
    expect(serveMemoryOf(QWEN, maxContext, KV).heap).toBeLessThanOrEqual(WASM_HEAP_BYTES);
    expect(serveMemoryOf(QWEN, 2 * maxContext, KV).heap).toBeGreaterThan(WASM_HEAP_BYTES);
    expect(note).toMatch(/^context: 8192 tokens, the longest whose prompt scoring fits the wasm heap \(the model's own 32768 would need [\d.]+ GiB there\); --max-context to choose$/);
  });

  it('counts the KV caches outside the heap: a larger budget moves the machine total, not the heap', () => {
    const small = serveMemoryOf(SMOLLM2, 2048, KV);
    const large = serveMemoryOf(SMOLLM2, 2048, 16 * KV);
    expect(large.heap).toBe(small.heap);
    expect(large.machine - small.machine).toBe(15 * KV);
    // The request in flight: keys and values of 30 layers x 3 heads of 64, 2,048 tokens, twice (its cache and the merged copy).
    expect(small.kvInFlight).toBe(2 * 2048 * 2 * 30 * 3 * 64 * 4);
    expect(small.machine).toBe(small.heap + KV + small.kvInFlight);
  });

  it('halves the context further when heap and KV caches together do not fit the machine, and says so', () => {
    const machineBytes = serveMemoryOf(SMOLLM2, 2048, KV).machine;
    const { maxContext, note } = servingContext(SMOLLM2, undefined, KV, { limits: { tensorBytes: null, machineBytes } });
    expect(maxContext).toBe(2048);
    expect(note).toMatch(/fits this machine's memory \(the model's own 8192 would need [\d.]+ GiB\)/);
  });

  it('honours --max-context up to the model limit and refuses more, naming the flag', () => {
    expect(servingContext(SMOLLM2, 1024, KV, { limits: WASM })).toEqual({ maxContext: 1024, note: "context: 1024 tokens (--max-context; the model's own is 8192)" });
    expect(() => servingContext(SMOLLM2, 10000, KV, { limits: WASM })).toThrow(/--max-context.*10000 is more than .*own limit of 8192/);
  });

  it('refuses a --max-context whose heap, or whose heap and KV caches, cannot fit, naming the flag and the parts', () => {
    const shape = { ...QWEN25_05B_SHAPE, maxContext: 16384 };
    expect(() => checkServeMemory(QWEN, shape, KV, null, WASM)).toThrow(/--max-context.*needs about [\d.]+ GiB of tensor memory to serve \(heap: weights .* scoring a 16384-token prompt .*; KV caches .* outside the heap .*\), more than the wasm backend's 4.00 GiB heap.*a shorter context \(--max-context, now 16384\)/);
    const fits = { ...SMOLLM2_135M_SHAPE, maxContext: 8192 };
    expect(checkServeMemory(SMOLLM2, fits, KV, null, WASM)).toMatch(/^memory needed: heap: weights 513 MiB \+ fused q\/k\/v 63 MiB \+ scoring a 8192-token prompt/);
    const machineBytes = serveMemoryOf(SMOLLM2, 8192, KV).machine - 1;
    expect(() => checkServeMemory(SMOLLM2, fits, KV, null, { tensorBytes: WASM_HEAP_BYTES, machineBytes })).toThrow(/--max-context.*more than this machine's .* of memory.*runtime\.kvCacheMiB/);
  });
});
