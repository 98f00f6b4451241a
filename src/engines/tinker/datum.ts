/**
 * The client's side of the typed-array ↔ wire conversions (the converters themselves live in
 * `wire.ts`, shared with `turnwise tinker serve`). What is added here is checking: SkyRL does not
 * check that targets match the input (it pads or drops silently), so turnwise refuses a datum whose
 * arrays differ in length before sending it, refuses a policy-gradient loss without its inputs,
 * and refuses an answer whose lengths do not match what was sent.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import type { EngineDatum, EngineLossName, EngineSampleResult, ForwardOutput } from '../engine.js';
import { type Datum, datumToWire, type ForwardBackwardOutput, forwardOutputFromWire, type SampleResponse, sampleResultFromWire } from './wire.js';

/** Losses that read the sampling log-probs and advantages of each token. */
const POLICY_GRADIENT_LOSSES: ReadonlySet<EngineLossName> = new Set(['importance_sampling', 'ppo', 'cispo', 'dro']);

/**
 * One datum on the wire, after checking that every array has the input's length and that a
 * policy-gradient loss has its sampling log-probs and advantages.
 * @example toWireDatum({ inputTokens, targetTokens, weights }, 'cross_entropy', 0).loss_fn_inputs.target_tokens.dtype // 'int64'
 */
export function toWireDatum(datum: EngineDatum, loss: EngineLossName, index: number): Datum {
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
  if (POLICY_GRADIENT_LOSSES.has(loss)) {
    if (!datum.samplingLogprobs) throw new InvalidArgumentError(field('samplingLogprobs'), `loss '${loss}' needs the sampling log-probs of every token`);
    if (!datum.advantages) throw new InvalidArgumentError(field('advantages'), `loss '${loss}' needs an advantage for every token`);
  }
  return datumToWire(datum);
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

/** Runs a shared converter, turning its argument errors (which name the field) into {@link WireShapeError}. */
function reading<T>(convert: () => T): T {
  try {
    return convert();
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw new WireShapeError(error.property, error.detail);
    throw error;
  }
}

/**
 * A `forward` / `forward_backward` result as typed arrays, one entry per datum sent, each as long
 * as that datum's input.
 * @example fromForwardResult(result, data).logprobs[0].length === data[0].inputTokens.length
 */
export function fromForwardResult(result: ForwardBackwardOutput, data: readonly EngineDatum[]): ForwardOutput {
  if (result.loss_fn_outputs.length !== data.length) throw new WireShapeError('loss_fn_outputs', `expected ${data.length} outputs (one per datum), got ${result.loss_fn_outputs.length}`);
  const out = reading(() => forwardOutputFromWire(result));
  data.forEach((d, i) => {
    const n = d.inputTokens.length;
    if (out.logprobs[i]?.length !== n) throw new WireShapeError(`loss_fn_outputs[${i}].logprobs`, `expected ${n} values, got ${out.logprobs[i]?.length}`);
    if (out.elementwiseLoss[i]?.length !== n) throw new WireShapeError(`loss_fn_outputs[${i}].elementwise_loss`, `expected ${n} values, got ${out.elementwiseLoss[i]?.length}`);
  });
  return out;
}

/**
 * An `asample` result as typed arrays; prompt log-probs `[promptLength]` with NaN first whichever
 * layout the server used (SkyRL sends `len − 1` values, the SDK documents `len` with a null first).
 * @example fromSampleResult(result, 16, true).promptLogprobs?.length // 16
 */
export function fromSampleResult(result: SampleResponse, promptLength: number, promptLogprobsAsked: boolean): EngineSampleResult {
  if (promptLogprobsAsked && (result.prompt_logprobs === null || result.prompt_logprobs === undefined)) throw new WireShapeError('prompt_logprobs', 'asked for but not returned');
  const out = reading(() => sampleResultFromWire(result, promptLength));
  return promptLogprobsAsked ? out : { sequences: out.sequences, promptLogprobs: null };
}
