/**
 * The scoring pass of serve's memory estimate (src/serve/serve-memory.ts) against the live tensor
 * bytes of a real one on the wasm backend: `modelScorer(...).score` over a full-context prompt with
 * 20 alternatives per position (the most `logprobs` asks), with the native kernels and with their
 * tfjs forms. Two shapes, one for each phase of the pass: a long context over a small vocabulary,
 * where a decoder layer's intermediates and attention maps are the peak (Qwen2's q/k/v biases), and
 * a large vocabulary in head chunks that do not divide the prompt (an untied, padded head), where a
 * chunk's log-softmax is. The estimate must bound the pass from above and stay within 1 % of it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { nativeKernels, nativeUse, setNativeUse } from '../../src/backend/native.js';
import { selectBackend } from '../../src/backend/select.js';
import { HEAD_CHUNK_BYTES, setHeadChunkBytes } from '../../src/models/transformer/chunked-head.js';
import { SCORING_HEAD_MAPS, scoringChunkRows } from '../../src/serve/scoring-chunk-rows.js';
import { type TransformerConfig, TransformerModel } from '../../src/models/transformer/model.js';
import { modelScorer } from '../../src/serve/prompt-scorer.js';
import { scoringBytes } from '../../src/serve/serve-memory.js';
import { MAX_TOP_LOGPROBS } from '../../src/serve/sampling-params.js';
import { type LiveBytesTracker, trackLiveTensorBytes } from '../helpers/live-tensor-bytes.js';

/** 512 positions over 512 ids: two attention maps of 4 x 512 x 512 outweigh a 512 x 512 head chunk. */
const LONG: TransformerConfig = { vocabSize: 512, dModel: 128, nLayers: 3, nHeads: 4, nKvHeads: 2, ffnHidden: 320, maxContext: 512, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: true, qkvBias: true, architecture: 'qwen2' };
/** 64 positions over 8,192 ids in chunks of 24 rows: a chunk's five [24, 8192] maps outweigh the decoder. */
const WIDE: TransformerConfig = { vocabSize: 8192, dModel: 64, nLayers: 3, nHeads: 2, nKvHeads: 1, ffnHidden: 160, maxContext: 64, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: false, architecture: 'llama' };
const WIDE_CHUNK_ROWS = 24;

let tracker: LiveBytesTracker;
const was = nativeUse();
beforeAll(async () => {
  await selectBackend('wasm');
  tracker = trackLiveTensorBytes();
});
afterEach(() => setHeadChunkBytes(HEAD_CHUNK_BYTES));
afterAll(() => setNativeUse(was));

/** The live tensor peak above the model's weights while a full-context prompt is scored. */
async function scoringPeak(shape: TransformerConfig, named: number): Promise<number> {
  const model = new TransformerModel(shape, Rng.fromSeed(1));
  model.restrictOutputs(named);
  const rng = Rng.fromSeed(2);
  const ids = Int32Array.from({ length: shape.maxContext + 1 }, () => rng.int(named)); // maxContext positions scored
  const before = tracker.read().live;
  tracker.resetPeak();
  try {
    const scores = await modelScorer(model).score(ids, MAX_TOP_LOGPROBS);
    expect(scores.logprobs).toHaveLength(shape.maxContext);
    expect(tracker.read().live).toBe(before); // nothing left behind
    return tracker.read().peak - before;
  } finally {
    model.dispose();
  }
}

describe("serve's scoring estimate against a full-context scoring pass", () => {
  it.each([
    ['decoder peak, native kernels', LONG, 500, 'all' as const],
    ['decoder peak, tfjs forms', LONG, 500, 'off' as const],
    ['head-chunk peak, native kernels', WIDE, 8000, 'all' as const],
    ['head-chunk peak, tfjs forms', WIDE, 8000, 'off' as const],
  ])('%s: bounds the live tensor peak from above within 1 %%', async (name, shape, named, use) => {
    setNativeUse(use);
    expect(nativeKernels() !== null).toBe(use === 'all'); // CI has the addon: both paths run
    if (shape === WIDE) {
      setHeadChunkBytes(SCORING_HEAD_MAPS * 4 * shape.vocabSize * WIDE_CHUNK_ROWS);
      expect(scoringChunkRows(shape.vocabSize)).toBe(WIDE_CHUNK_ROWS);
      expect(shape.maxContext % WIDE_CHUNK_ROWS).not.toBe(0);
    }
    const estimate = scoringBytes(shape, null, shape.maxContext, use === 'all');
    const peak = await scoringPeak(shape, named);
    const ratio = peak / estimate;
    console.log(`${name}: live peak ${peak} B vs estimate ${estimate} B: ${ratio.toFixed(4)}`);
    expect(ratio).toBeLessThanOrEqual(1);
    expect(ratio).toBeGreaterThanOrEqual(0.99);
  });

  it('takes the larger phase: the decoder grows with the square of the context, a head chunk with its rows', () => {
    const long = scoringBytes(LONG, null, 512, false);
    expect(scoringBytes(LONG, null, 1024, false)).toBeGreaterThan(3 * long); // tfjs attention maps: 4 x the floats at twice the context
    // The native attention kernel keeps none of the three maps.
    expect(scoringBytes(LONG, null, 1024, false) - scoringBytes(LONG, null, 1024, true)).toBeGreaterThanOrEqual(4 * 3 * LONG.nHeads * 1024 * 1024);
    setHeadChunkBytes(SCORING_HEAD_MAPS * 4 * WIDE.vocabSize * WIDE_CHUNK_ROWS);
    const wide = scoringBytes(WIDE, null, 64, true);
    // Five [24, vocab] maps (logits; the log-softmax's shifted, copy, exp, result) are most of it.
    expect(wide).toBeGreaterThan(4 * 5 * WIDE_CHUNK_ROWS * WIDE.vocabSize);
    setHeadChunkBytes(SCORING_HEAD_MAPS * 4 * WIDE.vocabSize * 2 * WIDE_CHUNK_ROWS);
    expect(scoringBytes(WIDE, null, 64, true)).toBeGreaterThan(1.9 * wide); // twice the rows per chunk
  });

  it('sizes a scoring chunk for its five [rows, vocab] maps, so the chunk stays within the head budget', () => {
    setHeadChunkBytes(HEAD_CHUNK_BYTES);
    const vocab = 151936;
    const rows = scoringChunkRows(vocab);
    expect(SCORING_HEAD_MAPS * 4 * vocab * rows).toBeLessThanOrEqual(HEAD_CHUNK_BYTES);
    expect(SCORING_HEAD_MAPS * 4 * vocab * (rows + 1)).toBeGreaterThan(HEAD_CHUNK_BYTES);
  });
});
