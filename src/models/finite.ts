/**
 * Weights must be numbers: a tensor holding NaN or ±Inf serves log-probs of −9999 on every token
 * and trains "successfully" with entropy 0. Checked at load on the float32 data (every reader of
 * F32, BF16 and F16 produces float32): the exponent bits all ones mean Inf or NaN, tested on a
 * Uint32 view, eight elements per round of a plain loop (1.5–3 ns an element on a loaded 2-core
 * machine, so about 0.3 s for a 135M-parameter model; docs/faults.md has the command).
 */
import { CheckpointError } from '../core/errors.js';

/**
 * Index of the first NaN or ±Inf in `data`, or -1.
 * @example firstNonFinite(Float32Array.of(1, NaN)) // 1
 */
export function firstNonFinite(data: Float32Array): number {
  const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
  const n = bits.length;
  const EXPONENT = 0x7f800000;
  let i = 0;
  // Eight at a time, one branch per round: the common case (all finite) stays cheap.
  for (; i + 8 <= n; i += 8) {
    const hit =
      (bits[i] & EXPONENT) === EXPONENT ||
      (bits[i + 1] & EXPONENT) === EXPONENT ||
      (bits[i + 2] & EXPONENT) === EXPONENT ||
      (bits[i + 3] & EXPONENT) === EXPONENT ||
      (bits[i + 4] & EXPONENT) === EXPONENT ||
      (bits[i + 5] & EXPONENT) === EXPONENT ||
      (bits[i + 6] & EXPONENT) === EXPONENT ||
      (bits[i + 7] & EXPONENT) === EXPONENT;
    if (hit) break;
  }
  for (; i < n; i++) if (((bits[i] as number) & EXPONENT) === EXPONENT) return i;
  return -1;
}

/**
 * Refuses a tensor that holds NaN or ±Inf, naming the file, the tensor, the value and where.
 * @throws CheckpointError
 * @example assertFiniteTensor('m/model.safetensors', 'model.norm.weight', data);
 */
export function assertFiniteTensor(location: string, name: string, data: Float32Array): void {
  const at = firstNonFinite(data);
  if (at < 0) return;
  const count = data.reduce((n, x) => (Number.isFinite(x) ? n : n + 1), 0);
  throw new CheckpointError(location, `tensor '${name}' holds ${count} non-finite value${count === 1 ? '' : 's'} (the first, ${data[at]}, at index ${at}): weights must be numbers`);
}
