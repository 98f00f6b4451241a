/**
 * The decoding state of one request of `TransformerPolicy`: checked and built from its
 * {@link ActRequest}, advanced one token at a time (sampled, or forced when the action trie allows
 * a single id), and turned into its {@link ActResult}. No model here: the policy feeds the model and
 * hands the chosen tokens to {@link appendToken}.
 */
import { InvalidArgumentError } from '../core/errors.js';
import type { DecodeConstraint } from '../core/types.js';
import { ActionTrie, type TrieNode } from './action-trie.js';
import type { CacheHit } from './episode-caches.js';
import type { ActRequest, ActResult, GrammarConstraint } from '../core/policy.js';
import type { TopCandidates } from './transformer/sampling.js';

/** What a request is checked against and when its decoding stops. */
export interface DecodeLimits {
  /** Token ids must lie in [0, vocabSize). */
  readonly vocabSize: number;
  /** Context plus generated tokens (the last one never fed back) must fit. */
  readonly maxContext: number;
  /** Id of `<|end|>` (a chat model's end-of-turn token): closes every action choice; free generation stops after it. */
  readonly endTokenId: number;
  /** More ids that end free generation (e.g. every `eos_token_id` of a model); a request's own `stopTokenIds` replace them. */
  readonly stopTokenIds?: readonly number[];
  /** Most tokens generated per request (a request's own `maxNewTokens` may lower it). */
  readonly maxNewTokens: number;
}

/** Decoding state of one request. */
export interface RequestState {
  readonly trie: ActionTrie | null;
  node: TrieNode;
  /** The grammar free generation is kept to, or null. */
  readonly grammar: GrammarConstraint | null;
  readonly tokens: number[];
  readonly logprobs: number[];
  readonly lossMask: number[];
  /** Entropy (nats) of each token's distribution; 0 for forced tokens. */
  readonly entropies: number[];
  readonly allowedOffsets: number[];
  readonly allowedIds: number[];
  /** Tokens not yet fed to the model (the context, then the last sampled + forced ones). */
  pending: number[];
  done: boolean;
  /** The episode's cached prefix this turn started from, if any. */
  hit: CacheHit | null;
  /** Ids that end this request's free generation. */
  readonly stop: ReadonlySet<number>;
  /** Most tokens this request generates. */
  readonly maxNew: number;
  /** Why it stopped: a stop id or a complete action ('stop'), or its token limit ('length'). */
  finish: 'stop' | 'length' | null;
  /** Alternatives kept per token (`ActRequest.topLogprobs`), 0 for none. */
  readonly topK: number;
  /** [tokens * topK] their ids (-1 pads) and log-probs (-Infinity pads). */
  readonly topIds: number[];
  readonly topLogprobs: number[];
}

/**
 * Checks request `index` (its context ids, its action choices' ids and `<|end|>` endings, and
 * that context + longest action fit `maxContext`) and returns its fresh state, context pending.
 * @example
 * const s = initRequestState({ contextTokens: [5, 6], actionChoices: [[7, 2], [8, 2]] }, 0, { vocabSize: 16, maxContext: 64, endTokenId: 2, maxNewTokens: 8 });
 * // s.pending = [5, 6], s.done = false
 */
export function initRequestState(request: ActRequest, index: number, limits: DecodeLimits): RequestState {
  const { vocabSize: v, maxContext, endTokenId, maxNewTokens } = limits;
  const context = request.contextTokens;
  const field = `requests[${index}].contextTokens`;
  if (context.length === 0) throw InvalidArgumentError.format(field, 'expected at least one token');
  for (const id of context) if (id < 0 || id >= v) throw InvalidArgumentError.format(field, `id ${id} outside [0, ${v})`);
  const grammar = request.grammar ?? null;
  if (grammar !== null && request.actionChoices !== null) throw InvalidArgumentError.format(`requests[${index}].grammar`, 'not with actionChoices (a grammar keeps free generation)');
  const trie = request.actionChoices === null ? null : ActionTrie.fromChoices(request.actionChoices);
  if (request.actionChoices !== null) {
    for (let j = 0; j < request.actionChoices.length; j++) {
      const choice = request.actionChoices[j];
      if (choice[choice.length - 1] !== endTokenId) {
        throw InvalidArgumentError.format(`requests[${index}].actionChoices[${j}]`, `must end with the <|end|> id ${endTokenId}`);
      }
      for (const id of choice) if (id < 0 || id >= v) throw InvalidArgumentError.format(`requests[${index}].actionChoices[${j}]`, `id ${id} outside [0, ${v})`);
    }
  }
  const own = request.maxNewTokens;
  if (own !== undefined && !(Number.isInteger(own) && own >= 1)) throw InvalidArgumentError.format(`requests[${index}].maxNewTokens`, `expected an integer >= 1, got ${own}`);
  const maxNew = Math.min(maxNewTokens, own ?? maxNewTokens);
  const topK = request.topLogprobs ?? 0;
  if (!(Number.isInteger(topK) && topK >= 0)) throw InvalidArgumentError.format(`requests[${index}].topLogprobs`, `expected an integer >= 0, got ${topK}`);
  const stopIds = request.stopTokenIds ?? [endTokenId, ...(limits.stopTokenIds ?? [])];
  for (const id of stopIds) if (!(Number.isInteger(id) && id >= 0 && id < v)) throw InvalidArgumentError.format(`requests[${index}].stopTokenIds`, `id ${id} outside [0, ${v})`);
  const longest = request.actionChoices === null ? maxNew : Math.min(maxNew, Math.max(...request.actionChoices.map((c) => c.length)));
  // The last generated token is never fed back, so positions reach context + longest - 1.
  if (context.length + longest - 1 > maxContext) {
    throw InvalidArgumentError.format(field, `${context.length} tokens + ${longest} new exceed maxContext ${maxContext}`);
  }
  return { trie, node: 0, grammar, tokens: [], logprobs: [], lossMask: [], entropies: [], allowedOffsets: [0], allowedIds: [], pending: [...context], done: false, hit: null, stop: new Set(stopIds), maxNew, finish: null, topK, topIds: [], topLogprobs: [] };
}

/**
 * Appends `tokenId` (chosen among `candidates`, from a distribution of entropy `entropy` nats, with
 * the `top` alternatives when the request asked for them) to `s`, queues it to be fed back, and
 * marks `s` done at a trie leaf, at a stop id in free generation, or at its token limit.
 * @example
 * appendToken(s, choice.tokenId, choice.logprob, 1, candidates, choice.entropy, choice.top); // a sampled token: in the loss
 */
export function appendToken(
  s: RequestState,
  tokenId: number,
  logprob: number,
  loss: number,
  candidates: Int32Array,
  entropy = 0,
  top?: TopCandidates,
): void {
  if (s.topK > 0) {
    // A forced token (no model call) had a single allowed id: it is its own only alternative.
    const ids = top?.ids ?? [tokenId];
    const lps = top?.logprobs ?? [0];
    for (let j = 0; j < s.topK; j++) {
      s.topIds.push(j < ids.length ? (ids[j] as number) : -1);
      s.topLogprobs.push(j < lps.length ? (lps[j] as number) : Number.NEGATIVE_INFINITY);
    }
  }
  s.tokens.push(tokenId);
  s.logprobs.push(logprob);
  s.lossMask.push(loss);
  s.entropies.push(entropy);
  s.pending.push(tokenId);
  if (s.trie !== null) {
    for (const id of candidates) s.allowedIds.push(id);
    s.allowedOffsets.push(s.allowedIds.length);
    s.node = s.trie.advance(s.node, tokenId);
    s.done = s.trie.isLeaf(s.node);
  } else {
    s.grammar?.accept(tokenId);
    s.done = s.stop.has(tokenId);
  }
  if (s.done) s.finish = 'stop';
  else if (s.tokens.length >= s.maxNew) {
    s.done = true;
    s.finish = 'length';
  }
}

/**
 * Appends forced tokens (single allowed id) without the model — logprob 0, out of the loss —
 * until a real choice or the end. Returns how many were appended.
 * @example
 * stats.forcedTokens += absorbForced(s);
 */
export function absorbForced(s: RequestState): number {
  let forced = 0;
  while (!s.done && s.trie !== null) {
    const allowed = s.trie.allowed(s.node);
    if (allowed.length !== 1) break;
    appendToken(s, allowed[0], 0, 0, allowed);
    forced++;
  }
  return forced;
}

/**
 * The result of a finished request, stamped with the weights version it was decoded with.
 * @example
 * const results = states.map((s) => toResult(s, version));
 */
export function toResult(s: RequestState, policyVersion: number): ActResult {
  const constraint: DecodeConstraint | null =
    s.trie === null ? null : { allowedOffsets: Int32Array.from(s.allowedOffsets), allowedIds: Int32Array.from(s.allowedIds) };
  return {
    tokens: Int32Array.from(s.tokens),
    logprobs: Float32Array.from(s.logprobs),
    lossMask: Uint8Array.from(s.lossMask),
    entropies: Float32Array.from(s.entropies),
    constraint,
    policyVersion,
    finishReason: s.finish ?? 'length',
    ...(s.topK > 0 ? { topLogprobs: { k: s.topK, ids: Int32Array.from(s.topIds), logprobs: Float32Array.from(s.topLogprobs) } } : {}),
  };
}
