/**
 * The local tfjs policy: batched, KV-cached, trie-constrained decoding over a {@link TransformerModel}.
 *
 * One `sampleActions` call runs one batched prefill (bucketed by context length to save padding,
 * then merged into one cache) and a decode loop. Forced tokens (a single allowed id) are appended
 * without the model — logprob 0, lossMask 0 — and the model runs only while some request still has
 * a real choice. Sampling happens on the CPU from the logits read back, with uniforms from `rng`.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import type { DecodeConstraint } from '../core/types.js';
import { ActionTrie, type TrieNode } from './action-trie.js';
import { KvCache } from './kv-cache.js';
import type { ActRequest, ActResult, Policy, SamplingOptions } from './policy.js';
import type { TransformerModel } from './transformer.js';
import { greedyToken, sampleToken, type TokenChoice } from './transformer/sampling.js';

/** Construction options of {@link TransformerPolicy}. */
export interface TransformerPolicyOptions {
  /** Id of `<|end|>`: closes every action; free generation stops after it. */
  readonly endTokenId: number;
  /** Id used for padding (masked, so its value does not matter). Default 0. */
  readonly padTokenId?: number;
  /** Initial weights version. Default 0. */
  readonly version?: number;
  /** A new prefill bucket starts when a context is shorter than this fraction of the bucket's longest. Default 0.75. */
  readonly bucketRatio?: number;
  /** Buckets smaller than this are not split off (each bucket costs a forward pass). Default 8. */
  readonly minBucketRows?: number;
}

/** Counters of the last decode call (for metrics and tests). */
export interface DecodeStats {
  /** Forward passes (`model.extend` calls): prefill buckets + decode steps. */
  modelCalls: number;
  /** Prefill buckets. */
  prefillBuckets: number;
  /** Token slots fed to the model, padding included. */
  paddedTokens: number;
  /** Real tokens fed to the model. */
  realTokens: number;
  /** Tokens chosen from model logits. */
  sampledTokens: number;
  /** Tokens appended because they were the only allowed id. */
  forcedTokens: number;
}

/** Decoding state of one request. */
interface RequestState {
  readonly trie: ActionTrie | null;
  node: TrieNode;
  readonly tokens: number[];
  readonly logprobs: number[];
  readonly lossMask: number[];
  readonly allowedOffsets: number[];
  readonly allowedIds: number[];
  /** Tokens not yet fed to the model (the context, then the last sampled + forced ones). */
  pending: number[];
  done: boolean;
}

/** Chooses a token for request `requestIndex` from its logits row and allowed candidates. */
type Picker = (logits: Float32Array, candidates: Int32Array, requestIndex: number) => TokenChoice;

/**
 * A {@link Policy} backed by a local transformer.
 * @example
 * const policy = new TransformerPolicy(model, { endTokenId: tokenizer.specialId('end') });
 * const [result] = await policy.sampleActions(
 *   [{ contextTokens, actionChoices: [goLeft, goRight] }],
 *   { temperature: 1, topP: 1, maxNewTokens: 8 },
 *   rng.fork('sampler'),
 * );
 */
export class TransformerPolicy implements Policy {
  private currentVersion: number;
  private stats: DecodeStats = emptyStats();
  private readonly vocab: Int32Array;

  constructor(
    readonly model: TransformerModel,
    private readonly options: TransformerPolicyOptions,
  ) {
    const v = model.config.vocabSize;
    if (!Number.isInteger(options.endTokenId) || options.endTokenId < 0 || options.endTokenId >= v) {
      throw InvalidArgumentError.format('endTokenId', `expected an id in [0, ${v}), got ${options.endTokenId}`);
    }
    this.currentVersion = options.version ?? 0;
    this.vocab = Int32Array.from({ length: v }, (_, i) => i);
  }

  /** Weights version stamped on every result. */
  get version(): number {
    return this.currentVersion;
  }

  /** Sets the version after new weights were loaded into the model. */
  setVersion(version: number): void {
    if (!Number.isInteger(version) || version < 0) throw InvalidArgumentError.format('version', `expected an integer >= 0, got ${version}`);
    this.currentVersion = version;
  }

  /** Counters of the last `sampleActions`/`greedyActions` call. */
  get lastStats(): Readonly<DecodeStats> {
    return this.stats;
  }

  async sampleActions(requests: readonly ActRequest[], options: SamplingOptions, rng: Rng): Promise<ActResult[]> {
    const { temperature, topP, maxNewTokens } = options;
    if (!(temperature > 0)) throw InvalidArgumentError.format('temperature', `expected > 0, got ${temperature}`);
    if (!(topP > 0 && topP <= 1)) throw InvalidArgumentError.format('topP', `expected in (0, 1], got ${topP}`);
    // A request with its own seed draws from its own stream, so its samples do not depend on
    // which other requests shared the batch (dynamic batching stays deterministic).
    const streams = requests.map((r) => (r.seed === undefined ? rng : Rng.fromSeed(r.seed)));
    return this.decode(requests, maxNewTokens, (logits, candidates, i) =>
      sampleToken(logits, candidates, temperature, topP, (streams[i] as Rng).next()),
    );
  }

  async greedyActions(requests: readonly ActRequest[], maxNewTokens: number): Promise<ActResult[]> {
    return this.decode(requests, maxNewTokens, greedyToken);
  }

  private async decode(requests: readonly ActRequest[], maxNewTokens: number, pick: Picker): Promise<ActResult[]> {
    if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1) throw InvalidArgumentError.format('maxNewTokens', `expected an integer >= 1, got ${maxNewTokens}`);
    const version = this.currentVersion;
    const stats = emptyStats(); // local: overlapping calls must not mix their counters
    const states = requests.map((r, i) => this.initState(r, i, maxNewTokens));
    let cache: KvCache | null = null;
    let rowOwner: number[] = []; // request index of each cache row
    for (;;) {
      for (const s of states) if (!s.done) stats.forcedTokens += this.absorbForced(s, maxNewTokens);
      const active = states.flatMap((s, i) => (s.done ? [] : [i]));
      if (active.length === 0) break;
      let logits: Float32Array;
      if (cache === null) {
        const prefill = await this.prefill(active, states, maxNewTokens, stats);
        cache = prefill.cache;
        rowOwner = prefill.rowOwner;
        logits = prefill.logits;
      } else {
        const keep = rowOwner.flatMap((owner, row) => (states[owner].done ? [] : [row]));
        cache.selectRows(Int32Array.from(keep));
        rowOwner = keep.map((row) => rowOwner[row]);
        logits = await this.step(cache, rowOwner.map((i) => states[i].pending), stats);
      }
      for (const s of rowOwner.map((i) => states[i])) s.pending = [];
      const v = this.model.config.vocabSize;
      rowOwner.forEach((i, row) => {
        const s = states[i];
        const candidates = s.trie === null ? this.vocab : s.trie.allowed(s.node);
        const choice = pick(logits.subarray(row * v, (row + 1) * v), candidates, i);
        this.append(s, choice.tokenId, choice.logprob, 1, candidates, maxNewTokens);
        stats.sampledTokens++;
      });
    }
    this.stats = stats;
    return states.map((s) => toResult(s, version));
  }

  private initState(request: ActRequest, index: number, maxNewTokens: number): RequestState {
    const context = request.contextTokens;
    const field = `requests[${index}].contextTokens`;
    if (context.length === 0) throw InvalidArgumentError.format(field, 'expected at least one token');
    const v = this.model.config.vocabSize;
    for (const id of context) if (id < 0 || id >= v) throw InvalidArgumentError.format(field, `id ${id} outside [0, ${v})`);
    const trie = request.actionChoices === null ? null : ActionTrie.fromChoices(request.actionChoices);
    if (request.actionChoices !== null) {
      request.actionChoices.forEach((choice, j) => {
        if (choice[choice.length - 1] !== this.options.endTokenId) {
          throw InvalidArgumentError.format(`requests[${index}].actionChoices[${j}]`, `must end with the <|end|> id ${this.options.endTokenId}`);
        }
        for (const id of choice) if (id < 0 || id >= v) throw InvalidArgumentError.format(`requests[${index}].actionChoices[${j}]`, `id ${id} outside [0, ${v})`);
      });
    }
    const longest = request.actionChoices === null ? maxNewTokens : Math.min(maxNewTokens, Math.max(...request.actionChoices.map((c) => c.length)));
    // The last generated token is never fed back, so positions reach context + longest - 1.
    if (context.length + longest - 1 > this.model.config.maxContext) {
      throw InvalidArgumentError.format(field, `${context.length} tokens + ${longest} new exceed maxContext ${this.model.config.maxContext}`);
    }
    return { trie, node: 0, tokens: [], logprobs: [], lossMask: [], allowedOffsets: [0], allowedIds: [], pending: [...context], done: false };
  }

  /**
   * Appends forced tokens (single allowed id) without the model, until a real choice or the end.
   * Returns how many were appended.
   */
  private absorbForced(s: RequestState, maxNewTokens: number): number {
    let forced = 0;
    while (!s.done && s.trie !== null) {
      const allowed = s.trie.allowed(s.node);
      if (allowed.length !== 1) break;
      this.append(s, allowed[0], 0, 0, allowed, maxNewTokens);
      forced++;
    }
    return forced;
  }

  private append(s: RequestState, tokenId: number, logprob: number, loss: number, candidates: Int32Array, maxNewTokens: number): void {
    s.tokens.push(tokenId);
    s.logprobs.push(logprob);
    s.lossMask.push(loss);
    s.pending.push(tokenId);
    if (s.trie !== null) {
      for (const id of candidates) s.allowedIds.push(id);
      s.allowedOffsets.push(s.allowedIds.length);
      s.node = s.trie.advance(s.node, tokenId);
      s.done = s.trie.isLeaf(s.node);
    } else {
      s.done = tokenId === this.options.endTokenId;
    }
    if (s.tokens.length >= maxNewTokens) s.done = true;
  }

  /**
   * Prefills the pending tokens of `active` requests in length buckets, then merges the bucket
   * caches into one. Returns the merged cache, its row owners and the [rows, V] next-token logits.
   */
  private async prefill(
    active: number[],
    states: RequestState[],
    maxNewTokens: number,
    stats: DecodeStats,
  ): Promise<{ cache: KvCache; rowOwner: number[]; logits: Float32Array }> {
    const ratio = this.options.bucketRatio ?? 0.75;
    const minRows = this.options.minBucketRows ?? 8;
    const sorted = [...active].sort((a, b) => states[b].pending.length - states[a].pending.length || a - b);
    const buckets: number[][] = [];
    sorted.forEach((i, k) => {
      const bucket = buckets[buckets.length - 1];
      const len = states[i].pending.length;
      const split =
        bucket === undefined ||
        (len < ratio * states[bucket[0]].pending.length && bucket.length >= minRows && sorted.length - k >= minRows);
      if (split) buckets.push([i]);
      else bucket.push(i);
    });
    const caches: KvCache[] = [];
    const parts: Float32Array[] = [];
    for (const bucket of buckets) {
      const width = states[bucket[0]].pending.length;
      const cache = this.model.createCache(bucket.length, width + (buckets.length === 1 ? maxNewTokens : 0));
      caches.push(cache);
      parts.push(await this.step(cache, bucket.map((i) => states[i].pending), stats));
      stats.prefillBuckets++;
    }
    const v = this.model.config.vocabSize;
    const logits = new Float32Array(active.length * v);
    let offset = 0;
    for (const part of parts) {
      logits.set(part, offset);
      offset += part.length;
    }
    const cache = caches.length === 1 ? caches[0] : KvCache.merge(caches, maxNewTokens);
    return { cache, rowOwner: buckets.flat(), logits };
  }

  /** Feeds each row's pending tokens (left-padded to a common length) and reads back the logits. */
  private async step(cache: KvCache, pending: number[][], stats: DecodeStats): Promise<Float32Array> {
    const width = Math.max(...pending.map((p) => p.length));
    const rows = pending.length;
    const ids = new Int32Array(rows * width).fill(this.options.padTokenId ?? 0); // [rows, width]
    const mask = new Uint8Array(rows * width);
    pending.forEach((p, r) => {
      const start = r * width + width - p.length;
      ids.set(p, start);
      mask.fill(1, start, (r + 1) * width);
      stats.realTokens += p.length;
    });
    stats.paddedTokens += rows * width;
    stats.modelCalls++;
    const logits = this.model.extend(cache, ids, mask, width);
    try {
      return (await logits.data()) as Float32Array;
    } finally {
      logits.dispose();
    }
  }
}

function emptyStats(): DecodeStats {
  return { modelCalls: 0, prefillBuckets: 0, paddedTokens: 0, realTokens: 0, sampledTokens: 0, forcedTokens: 0 };
}

function toResult(s: RequestState, policyVersion: number): ActResult {
  const constraint: DecodeConstraint | null =
    s.trie === null ? null : { allowedOffsets: Int32Array.from(s.allowedOffsets), allowedIds: Int32Array.from(s.allowedIds) };
  return {
    tokens: Int32Array.from(s.tokens),
    logprobs: Float32Array.from(s.logprobs),
    lossMask: Uint8Array.from(s.lossMask),
    constraint,
    policyVersion,
  };
}
