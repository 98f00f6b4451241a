/**
 * How the sampler picks each row's next token: temperature / top-p sampling from a request's own
 * stream, or the most likely token. Objects with a method rather than closures made per call (see
 * the note on {@link Picker}).
 */
import type { ActRequest } from '../core/policy.js';
import type { Rng } from '../core/rng.js';
import { greedyPrefix } from './transformer/greedy-prefix.js';
import { greedyToken, sampleToken, type TokenChoice } from './transformer/sampling.js';

/**
 * Picks a request's next token. An object with a method, not a closure made per call: V8 compiled
 * such a closure (called per row and token) afresh on nearly every decode call.
 */
export interface Picker {
  pick(logits: Float32Array, candidates: Int32Array, requestIndex: number): TokenChoice;
}

/** Temperature / top-p sampling, each request from its own stream. */
export class SamplingPicker implements Picker {
  constructor(
    private readonly requests: readonly ActRequest[],
    private readonly streams: readonly Rng[],
    private readonly temperature: number,
    private readonly topP: number,
  ) {}

  pick(logits: Float32Array, candidates: Int32Array, i: number): TokenChoice {
    return sampleToken(logits, candidates, this.temperature, this.topP, (this.streams[i] as Rng).next(), this.requests[i]?.topLogprobs ?? 0);
  }
}

/** The most likely token (free generation over the whole output vocabulary in one pass: greedy-prefix.ts). */
export class GreedyPicker implements Picker {
  constructor(
    private readonly requests: readonly ActRequest[],
    private readonly vocab: Int32Array,
  ) {}

  pick(logits: Float32Array, candidates: Int32Array, i: number): TokenChoice {
    const topK = this.requests[i]?.topLogprobs ?? 0;
    return candidates === this.vocab && topK === 0 ? greedyPrefix(logits, candidates.length) : greedyToken(logits, candidates, topK);
  }
}
