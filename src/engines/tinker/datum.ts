/**
 * Typed arrays ↔ the Tinker wire: an {@link EngineDatum} becomes a `Datum` (`model_input` chunks
 * plus `loss_fn_inputs` tensors named `target_tokens`, `weights`, `logprobs`, `advantages`), and a
 * `forward` result or a sample becomes typed arrays again, with every length checked: SkyRL does
 * not check that targets match the input (it pads or drops silently), so turnwise does, on both
 * sides.
 */
import type { EngineDatum, EngineLossName, EngineSampleResult, EngineSequence, ForwardOutput } from '../engine.js';
import { InvalidArgumentError } from '../../core/errors.js';
import type { ForwardResult, SampleResult, WireDatum, WireTensor } from './client-wire.js';

/** Losses that read the sampling log-probs and advantages of each token. */
const POLICY_GRADIENT_LOSSES: ReadonlySet<EngineLossName> = new Set(['importance_sampling', 'ppo', 'cispo', 'dro']);

function tensor(values: ArrayLike<number>, dtype: WireTensor['dtype']): WireTensor {
  return { data: Array.from(values), dtype, shape: [values.length] };
}

/**
 * One datum on the wire, after checking that every array has the input's length and that a
 * policy-gradient loss has its sampling log-probs and advantages.
 * @example toWireDatum({ inputTokens, targetTokens, weights }, 'cross_entropy', 0).loss_fn_inputs.target_tokens.dtype // 'int64'
 */
export function toWireDatum(datum: EngineDatum, loss: EngineLossName, index: number): WireDatum {
  const n = datum.inputTokens.length;
  const field = (name: string) => `data[${index}].${name}`;
  if (n === 0) throw new InvalidArgumentError(field('inputTokens'), 'expected at least one token');
  const check = (name: string, values: ArrayLike<number> | undefined) => {
    if (values !== undefined && values.length !== n) throw new InvalidArgumentError(field(name), `expected ${n} values (the input's length), got ${values.length}`);
  };
  check('targetTokens', datum.targetTokens);
  check('weights', datum.weights);
  check('samplingLogprobs', datum.samplingLogprobs);
  check('advantages', datum.advantages);
  const inputs: Record<string, WireTensor> = {
    target_tokens: tensor(datum.targetTokens, 'int64'),
    weights: tensor(datum.weights, 'float32'),
  };
  if (POLICY_GRADIENT_LOSSES.has(loss)) {
    if (!datum.samplingLogprobs) throw new InvalidArgumentError(field('samplingLogprobs'), `loss '${loss}' needs the sampling log-probs of every token`);
    if (!datum.advantages) throw new InvalidArgumentError(field('advantages'), `loss '${loss}' needs an advantage for every token`);
  }
  if (datum.samplingLogprobs) inputs.logprobs = tensor(datum.samplingLogprobs, 'float32');
  if (datum.advantages) inputs.advantages = tensor(datum.advantages, 'float32');
  return { model_input: { chunks: [{ type: 'encoded_text', tokens: Array.from(datum.inputTokens) }] }, loss_fn_inputs: inputs };
}

/** Why an answer cannot be read, with the field at fault (the caller wraps it with the call and server). */
export class WireShapeError extends Error {
  constructor(
    readonly field: string,
    readonly detail: string,
  ) {
    super(`${field}: ${detail}`);
    this.name = 'WireShapeError';
  }
}

function floats(values: readonly (number | null)[], field: string, length: number): Float32Array {
  if (values.length !== length) throw new WireShapeError(field, `expected ${length} values, got ${values.length}`);
  // JSON has no NaN; a null stands for a value the server could not compute.
  return Float32Array.from(values, (v) => (v === null ? Number.NaN : v));
}

/**
 * A `forward` / `forward_backward` result as typed arrays, one entry per datum sent.
 * @example fromForwardResult(result, data).logprobs[0].length === data[0].inputTokens.length
 */
export function fromForwardResult(result: ForwardResult, data: readonly EngineDatum[]): ForwardOutput {
  if (result.loss_fn_outputs.length !== data.length) throw new WireShapeError('loss_fn_outputs', `expected ${data.length} outputs (one per datum), got ${result.loss_fn_outputs.length}`);
  const logprobs: Float32Array[] = [];
  const elementwiseLoss: Float32Array[] = [];
  result.loss_fn_outputs.forEach((output, i) => {
    const n = data[i]?.inputTokens.length ?? 0;
    const lp = output.logprobs;
    const loss = output.elementwise_loss;
    if (!lp) throw new WireShapeError(`loss_fn_outputs[${i}].logprobs`, 'missing');
    logprobs.push(floats(lp.data, `loss_fn_outputs[${i}].logprobs`, n));
    elementwiseLoss.push(loss ? floats(loss.data, `loss_fn_outputs[${i}].elementwise_loss`, n) : new Float32Array(n));
  });
  return { logprobs, elementwiseLoss, metrics: { ...(result.metrics ?? {}) } };
}

/**
 * Prompt log-probs in the interface's form, one per prompt token with NaN first. Servers differ:
 * the SDK documents `len` entries with a null first; SkyRL sends `len − 1` with no leading entry.
 * @example normalisePromptLogprobs([-1.5, -2], 3) // Float32Array [NaN, -1.5, -2]
 */
export function normalisePromptLogprobs(values: readonly (number | null)[], promptLength: number): Float32Array {
  const out = new Float32Array(promptLength).fill(Number.NaN);
  const offset = values.length === promptLength ? 0 : values.length === promptLength - 1 ? 1 : -1;
  if (offset < 0) throw new WireShapeError('prompt_logprobs', `expected ${promptLength} (or ${promptLength - 1}) values for a ${promptLength}-token prompt, got ${values.length}`);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    // Position 0 has no prefix to condition on: NaN whatever a server put there.
    if (i + offset > 0 && v !== null && v !== undefined) out[i + offset] = v;
  }
  return out;
}

/**
 * An `asample` result as typed arrays.
 * @example fromSampleResult(result, 16, true).promptLogprobs?.length // 16
 */
export function fromSampleResult(result: SampleResult, promptLength: number, promptLogprobsAsked: boolean): EngineSampleResult {
  const sequences: EngineSequence[] = result.sequences.map((s, i) => {
    if (!s.logprobs) throw new WireShapeError(`sequences[${i}].logprobs`, 'missing: turnwise trains on the sampled tokens’ log-probs');
    return { tokens: Int32Array.from(s.tokens), logprobs: floats(s.logprobs, `sequences[${i}].logprobs`, s.tokens.length), stopReason: s.stop_reason };
  });
  let promptLogprobs: Float32Array | null = null;
  if (promptLogprobsAsked) {
    if (!result.prompt_logprobs) throw new WireShapeError('prompt_logprobs', 'asked for but not returned');
    promptLogprobs = normalisePromptLogprobs(result.prompt_logprobs, promptLength);
  }
  return { sequences, promptLogprobs };
}
