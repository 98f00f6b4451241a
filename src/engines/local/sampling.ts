/**
 * Sampling for the local engine, as the Tinker API defines it: token ids in, `numSamples`
 * continuations out, each with the log-prob of every generated token under the model's RAW
 * distribution (log_softmax of the logits, whatever the temperature), generation ending at the
 * first stop id (kept in the output) or at `maxTokens`. Temperature 0 is argmax (ties: lower id);
 * otherwise top-k, then top-p, then a draw at the temperature. Sample i draws from its own stream
 * seeded `seed + i`, so a request is reproducible and a one-sample request with `seed + i` repeats
 * sample i.
 */
import { InvalidArgumentError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import { tf } from '../../backend/tf.js';
import { KvCache } from '../../models/kv-cache.js';
import type { TransformerModel } from '../../models/transformer/model.js';
import { sampleToken, topCandidates } from '../../models/transformer/sampling.js';
import type { EngineSampleRequest, EngineSampleResult, EngineSequence } from '../engine.js';

/**
 * Checks a request against the model (ids in the vocabulary, prompt + max_tokens within the context), naming the field.
 * @example checkSampleRequest(req, model.config.vocabSize, model.config.maxContext)
 */
export function checkSampleRequest(req: EngineSampleRequest, vocabSize: number, maxContext: number): void {
  if (req.promptTokens.length === 0) throw InvalidArgumentError.format('prompt', 'no tokens');
  for (const id of req.promptTokens) if (!(id >= 0 && id < vocabSize)) throw InvalidArgumentError.format('prompt', `token id ${id} outside the vocabulary [0, ${vocabSize})`);
  for (const id of req.stopTokenIds) if (!(Number.isInteger(id) && id >= 0 && id < vocabSize)) throw InvalidArgumentError.format('sampling_params.stop', `token id ${id} outside the vocabulary [0, ${vocabSize})`);
  if (!(Number.isInteger(req.numSamples) && req.numSamples >= 1)) throw InvalidArgumentError.format('num_samples', `expected a positive integer, got ${req.numSamples}`);
  if (!(Number.isInteger(req.maxTokens) && req.maxTokens >= 1)) throw InvalidArgumentError.format('sampling_params.max_tokens', `expected a positive integer, got ${req.maxTokens}`);
  if (req.promptTokens.length + req.maxTokens > maxContext) {
    throw InvalidArgumentError.format('sampling_params.max_tokens', `prompt (${req.promptTokens.length}) + max_tokens (${req.maxTokens}) exceeds the model's context of ${maxContext}`);
  }
  if (!(req.temperature >= 0 && Number.isFinite(req.temperature))) throw InvalidArgumentError.format('sampling_params.temperature', `expected >= 0, got ${req.temperature}`);
  if (!(req.topP > 0 && req.topP <= 1)) throw InvalidArgumentError.format('sampling_params.top_p', `expected in (0, 1], got ${req.topP}`);
  if (!(req.topK === -1 || (Number.isInteger(req.topK) && req.topK > 0))) throw InvalidArgumentError.format('sampling_params.top_k', `expected -1 or a positive integer, got ${req.topK}`);
}

/**
 * [promptLen] log-prob of each prompt token given its prefix (NaN at 0), one teacher-forced pass.
 * @example promptLogprobs(model, prompt)[3] // log p(prompt[3] | prompt[0..2])
 */
export function promptLogprobs(model: TransformerModel, prompt: Int32Array): Float32Array {
  const out = new Float32Array(prompt.length).fill(Number.NaN);
  const n = prompt.length - 1;
  if (n <= 0) return out;
  const positions = Int32Array.from({ length: n }, (_, i) => i);
  const batch = { batchSize: 1, seqLen: n, inputIds: prompt.slice(0, n), attentionMask: new Uint8Array(n).fill(1), targetPositions: positions, targetIds: prompt.slice(1), allowedOffsets: null, allowedIds: null };
  const values = tf.tidy(() => model.forwardTrain(batch, 1).logprobs.dataSync() as Float32Array);
  out.set(values, 1);
  return out;
}

/**
 * Generates `req.numSamples` continuations of `req.promptTokens` (module comment). `fallbackSeed`
 * seeds a request that gives none (the engine's own stream).
 * @example const result = sampleFromModel(model, req, 1234);
 */
export function sampleFromModel(model: TransformerModel, req: EngineSampleRequest, fallbackSeed: number): EngineSampleResult {
  const { vocabSize, maxContext } = model.config;
  checkSampleRequest(req, vocabSize, maxContext);
  const seed = req.seed ?? fallbackSeed;
  const streams = Array.from({ length: req.numSamples }, (_, i) => Rng.fromSeed(seed + i));
  // The prompt is prefilled once; every sample continues from a copy of that cache
  const first = model.createCache(1, req.promptTokens.length + req.maxTokens);
  const prefill = model.extendPacked([first], [req.promptTokens]);
  const prefillLogits = prefill.dataSync() as Float32Array;
  prefill.dispose();
  const caches = streams.map((_, i) => (i === 0 ? first : KvCache.merge([first], req.maxTokens)));
  const stops = new Set(req.stopTokenIds);
  const all = Int32Array.from({ length: vocabSize }, (_, i) => i);
  const tokens: number[][] = streams.map(() => []);
  const logprobs: number[][] = streams.map(() => []);
  const reasons: Array<'stop' | 'length'> = streams.map(() => 'length');
  let active = streams.map((_, i) => i);
  let inputs: Int32Array[] = [];
  while (active.length > 0) {
    let logits: Float32Array;
    if (inputs.length === 0) {
      logits = new Float32Array(active.length * vocabSize);
      for (let r = 0; r < active.length; r++) logits.set(prefillLogits, r * vocabSize);
    } else {
      const rows = model.extendPacked(
        active.map((i) => caches[i] as KvCache),
        inputs,
      );
      logits = rows.dataSync() as Float32Array;
      rows.dispose();
    }
    const next: number[] = [];
    active.forEach((i, r) => {
      const row = logits.subarray(r * vocabSize, (r + 1) * vocabSize);
      const token = chooseToken(row, all, req, streams[i] as Rng);
      (tokens[i] as number[]).push(token);
      (logprobs[i] as number[]).push(rawLogprob(row, token));
      if (stops.has(token)) reasons[i] = 'stop';
      else if ((tokens[i] as number[]).length < req.maxTokens) next.push(i);
    });
    active = next;
    inputs = active.map((i) => Int32Array.of((tokens[i] as number[]).at(-1) as number));
  }
  const sequences: EngineSequence[] = streams.map((_, i) => ({ tokens: Int32Array.from(tokens[i] as number[]), logprobs: Float32Array.from(logprobs[i] as number[]), stopReason: reasons[i] as 'stop' | 'length' }));
  return { sequences, promptLogprobs: req.promptLogprobs === true ? promptLogprobs(model, req.promptTokens) : null };
}

/** One token from a row of raw logits under the request's temperature, top-k and top-p. */
function chooseToken(row: Float32Array, all: Int32Array, req: EngineSampleRequest, rng: Rng): number {
  if (req.temperature === 0) {
    let best = 0;
    for (let j = 1; j < row.length; j++) if ((row[j] as number) > (row[best] as number)) best = j;
    return best;
  }
  let candidates = all;
  if (req.topK > 0 && req.topK < row.length) candidates = topCandidates(Float64Array.from(row), all, req.topK).ids;
  return sampleToken(row, candidates, req.temperature, req.topP, rng.next()).tokenId;
}

/** log_softmax(row)[token], in float64. */
function rawLogprob(row: Float32Array, token: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (const x of row) if (x > max) max = x;
  let sum = 0;
  for (const x of row) sum += Math.exp(x - max);
  return (row[token] as number) - max - Math.log(sum);
}
