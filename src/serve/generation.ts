/**
 * One choice of a completion: generated through the batcher, with the request's token limit, stop
 * ids, top-k alternatives and stop strings, as text cut into per-token pieces.
 *
 * Stop strings are looked for in the decoded text while generating: the reply is generated in
 * chunks (16 tokens, then twice as many each time) and checked after each, so a reply that stops
 * early costs at most about twice its tokens, not `max_tokens`. Each chunk continues the same
 * generation: the policy keeps its keys/values under the choice's key (`episodeId`) and prefills
 * only the new tokens. A seeded choice draws chunk j from a seed derived from (seed, j), so it is
 * reproducible.
 */
import type { ActResult, GrammarConstraint, TopLogprobs } from '../core/policy.js';
import { Rng } from '../core/rng.js';
import type { GenerationBatcher, GenerationSettings } from './batcher.js';
import { cutAtStop } from './stop-strings.js';
import { type TokenDecoder, textPieces } from './token-text.js';

/** What to generate for one choice. */
export interface ChoiceSpec {
  readonly prompt: Int32Array;
  /** Constrained decoding over these token sequences, or null for free generation. */
  readonly actionChoices: readonly Int32Array[] | null;
  /** The grammar this choice's free generation is kept to (its own: it holds the choice's progress), or null. */
  readonly grammar?: GrammarConstraint | null;
  readonly maxTokens: number;
  /** This choice's seed (see {@link choiceSeed}), or undefined to draw from the server's stream. */
  readonly seed: number | undefined;
  /** Alternatives per token (0: none). */
  readonly topLogprobs: number;
  readonly stop: readonly string[];
  readonly stopTokenIds: readonly number[];
  /** A key unique to this choice while it generates (its KV cache between chunks). */
  readonly key: string;
}

/** One generated choice. */
export interface GeneratedChoice {
  /** [n] generated ids kept: up to the stop id, or to the token that completed a stop string. */
  readonly tokens: Int32Array;
  /** [n] their log-probs (the distribution they were drawn from). */
  readonly logprobs: Float32Array;
  readonly top: TopLogprobs | null;
  /** [n] each token's piece of the text (special tokens add none); they join to `text`. */
  readonly pieces: readonly string[];
  /** The reply (cut before a stop string). */
  readonly text: string;
  readonly finishReason: 'stop' | 'length';
}

/** First chunk when stop strings are checked while generating. */
const FIRST_CHUNK = 16;

/**
 * The seed of choice `index` of a request: the request's seed for the first choice (so `n: 1`
 * and the first of `n: 4` agree), a seed derived from it for the others; undefined without one.
 * @example choiceSeed(7, 0) // 7
 */
export function choiceSeed(seed: number | null | undefined, index: number): number | undefined {
  if (seed === null || seed === undefined) return undefined;
  return index === 0 ? seed : Rng.fromSeed(seed).fork('serve-choice', index).int(2 ** 31);
}

/**
 * Generates one choice (module comment).
 * @example const choice = await generateChoice(batcher, { temperature: 1, topP: 1 }, spec, model.tokens);
 */
export async function generateChoice(batcher: GenerationBatcher, settings: GenerationSettings, spec: ChoiceSpec, decoder: Pick<TokenDecoder, 'decode'>): Promise<GeneratedChoice> {
  const base = {
    actionChoices: spec.actionChoices,
    stopTokenIds: spec.stopTokenIds,
    ...(spec.topLogprobs > 0 ? { topLogprobs: spec.topLogprobs } : {}),
    ...(spec.grammar ? { grammar: spec.grammar } : {}),
  };
  const parts: ActResult[] = [];
  let count = 0;
  let finish: 'stop' | 'length' = 'length';
  const chunked = spec.stop.length > 0 && spec.actionChoices === null && spec.maxTokens > FIRST_CHUNK;
  try {
    for (let chunk = 0, size = FIRST_CHUNK; ; chunk++, size *= 2) {
      const context = parts.length === 0 ? spec.prompt : concat([spec.prompt, ...parts.map((p) => p.tokens)]);
      const maxNewTokens = chunked ? Math.min(size, spec.maxTokens - count) : spec.maxTokens;
      const seed = spec.seed === undefined ? undefined : chunk === 0 ? spec.seed : Rng.fromSeed(spec.seed).fork('serve-chunk', chunk).int(2 ** 31);
      const result = await batcher.generate({ ...base, contextTokens: context, maxNewTokens, ...(seed === undefined ? {} : { seed }), ...(chunked ? { episodeId: spec.key } : {}) }, settings);
      parts.push(result);
      count += result.tokens.length;
      finish = result.finishReason ?? 'length';
      if (!chunked || finish === 'stop' || count >= spec.maxTokens) break;
      if (cutAtStop(textPieces(decoder, concat(parts.map((p) => p.tokens)), false), spec.stop) !== null) break;
    }
  } finally {
    if (chunked) batcher.release([spec.key]);
  }
  let tokens = concat(parts.map((p) => p.tokens));
  let logprobs = concatFloat(parts.map((p) => p.logprobs));
  let top = spec.topLogprobs > 0 ? concatTop(parts.map((p) => p.topLogprobs as TopLogprobs), spec.topLogprobs) : null;
  let pieces = textPieces(decoder, tokens, false);
  let text = pieces.join('');
  const cut = cutAtStop(pieces, spec.stop);
  if (cut !== null) {
    tokens = tokens.slice(0, cut.tokens);
    logprobs = logprobs.slice(0, cut.tokens);
    if (top !== null) top = { k: top.k, ids: top.ids.slice(0, cut.tokens * top.k), logprobs: top.logprobs.slice(0, cut.tokens * top.k) };
    pieces = cut.pieces;
    text = cut.text;
    finish = 'stop';
  }
  return { tokens, logprobs, top, pieces, text, finishReason: finish };
}

function concat(parts: readonly Int32Array[]): Int32Array {
  const out = new Int32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function concatFloat(parts: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function concatTop(parts: readonly TopLogprobs[], k: number): TopLogprobs {
  return { k, ids: concat(parts.map((p) => p.ids)), logprobs: concatFloat(parts.map((p) => p.logprobs)) };
}
