/**
 * How far each bench figure is from the physical limit (issue #31): the model FLOPs of the work
 * (a multiply-add counts 2; causal attention counts the keys each query sees, not a masked square;
 * embedding lookups, norms and activations count nothing) over the core's measured float32 FMA
 * peak (`native/fma_peak.c`, per CPU-second of one thread, so other processes on a shared machine
 * do not lower it).
 *
 * - forward of one token with `keys` keys visible: 2 x (linear weights + the LM head, when that
 *   token's logits are computed) + 4 x heads x headDim x keys per layer (QKᵀ and PV);
 * - full fine-tuning: 3 x the forward (backward = 2 x forward: input and weight gradients);
 * - LoRA: the frozen weights need only input gradients, 2 x their forward, and the adapters 3 x.
 */
import { nativeBlas } from '../src/backend/native-blas.js';
import type { LoraSpec } from '../src/models/lora/lora.js';
import { loraModules } from '../src/models/lora/lora.js';
import { headDim, keyValueWidth, queryWidth, type TransformerConfig } from '../src/models/transformer/config.js';

/** Multiply-adds x 2 of a decoder's linear layers for one token (q, k, v, o, gate, up, down of every layer). */
function linearFlops(shape: TransformerConfig): number {
  const d = shape.dModel;
  const q = queryWidth(shape);
  const kv = keyValueWidth(shape);
  return 2 * shape.nLayers * (2 * d * q + 2 * d * kv + 3 * d * shape.ffnHidden);
}

/** QKᵀ and PV of one query over `keys` keys, every layer. */
function attentionFlops(shape: TransformerConfig, keys: number): number {
  return 4 * shape.nLayers * shape.nHeads * headDim(shape) * keys;
}

const headFlops = (shape: TransformerConfig): number => 2 * shape.dModel * shape.vocabSize;

/** Keys seen by all queries of a causal sequence of `t` tokens after `past` cached ones. */
const causalKeys = (t: number, past = 0): number => t * past + (t * (t + 1)) / 2;

/**
 * One prefill of `tokens` new tokens in one sequence (logits of the last token only, as a sampler needs).
 * @example prefillFlops(SMOLLM2_135M, 256) // about 5.5e10
 */
export function prefillFlops(shape: TransformerConfig, tokens: number): number {
  return tokens * linearFlops(shape) + headFlops(shape) + attentionFlops(shape, causalKeys(tokens));
}

/**
 * One decode step of `rows` rows, each with `context` tokens cached before it.
 * @example decodeStepFlops(SMOLLM2_135M, 64, 64) // 64 x (linear + head + attention over 65 keys)
 */
export function decodeStepFlops(shape: TransformerConfig, rows: number, context: number): number {
  return rows * (linearFlops(shape) + headFlops(shape) + attentionFlops(shape, context + 1));
}

/**
 * One training step on `rows` x `seq` tokens, every position a target (logits everywhere).
 * @example trainStepFlops(SMOLLM2_135M, 2, 128, null) // 3 x forward
 */
export function trainStepFlops(shape: TransformerConfig, rows: number, seq: number, lora: LoraSpec | null): number {
  const tokens = rows * seq;
  const forward = tokens * (linearFlops(shape) + headFlops(shape)) + rows * attentionFlops(shape, causalKeys(seq));
  if (lora === null) return 3 * forward;
  const adapters = 2 * tokens * loraModules(shape, lora).reduce((n, m) => n + lora.rank * (m.inFeatures + m.outFeatures), 0);
  return 2 * forward + 3 * adapters;
}

let peak: { gflops: number; lanes: number } | null | undefined;

/**
 * The core's float32 FMA peak in GFLOP/s (measured once, 0.3 s), or null without the native addon.
 * @example corePeakGflops() // 116 on an AVX-512 core at 3.6 GHz with two 256-bit FMA pipes
 */
export function corePeak(): { gflops: number; lanes: number } | null {
  if (peak !== undefined) return peak;
  const { blas } = nativeBlas();
  const measured = blas?.fmaPeak(0.3) ?? null;
  peak = measured !== null && measured.lanes > 0 ? { gflops: measured.gflops, lanes: measured.lanes } : null;
  return peak;
}

/**
 * `flopsPerSecond` as a share of the core's peak, e.g. `37 % of peak`; '' without a measured peak.
 * @example peakShare(43e9) // '37 % of peak'
 */
export function peakShare(flopsPerSecond: number): string {
  const p = corePeak();
  if (p === null || !Number.isFinite(flopsPerSecond)) return '';
  return `${((100 * flopsPerSecond) / (p.gflops * 1e9)).toFixed(0)} % of peak`;
}

/**
 * One line naming the peak the shares are of.
 * @example describePeak() // 'core FMA peak 116 GFLOP/s (float32, 16-lane FMAs, measured)'
 */
export function describePeak(): string {
  const p = corePeak();
  return p === null ? 'core FMA peak: not measured (native addon not built)' : `core FMA peak ${p.gflops.toFixed(0)} GFLOP/s (float32, ${p.lanes}-lane FMAs, measured in thread CPU time)`;
}
