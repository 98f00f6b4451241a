/**
 * The local tfjs policy: batched, KV-cached, trie-constrained decoding over a {@link TransformerModel}.
 *
 * One `sampleActions` call runs one batched prefill — packed by default (every row's new tokens
 * in one ragged `extendPacked` call, each row in its own cache), or bucketed by context length and
 * padded (`packed: false`) — and a decode loop over one merged cache of the rows still deciding.
 * Forced tokens (a single allowed id) are appended without the model — logprob 0, lossMask 0 —
 * and the model runs only while some request still has a real choice. Sampling happens on the CPU from the logits read back, with uniforms from `rng`.
 *
 * Across turns: a request with an `episodeId` leaves its row of the cache (the keys/values of its
 * context and of the action tokens fed back) in an {@link EpisodeCacheStore}. When the episode's
 * next context starts with exactly those ids and the weights are unchanged, its prefill feeds only
 * the new tokens on top of them; rows of different cached lengths share a batch, left-padded and
 * masked (`KvCache.merge`). Results are the same as without caching, within float rounding.
 */
import { InvalidArgumentError } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import { absorbForced, appendToken, type DecodeLimits, initRequestState, type RequestState, toResult } from './decode-state.js';
import { type EpisodeCacheCounters, EpisodeCacheStore } from './episode-caches.js';
import { KvCache } from './kv-cache.js';
import type { ActRequest, ActResult, Policy, SamplingOptions } from '../core/policy.js';
import { prefillBuckets } from './prefill-buckets.js';
import type { TransformerModel } from './transformer/model.js';
import { GreedyPicker, type Picker, SamplingPicker } from './token-pickers.js';

/** Construction options of {@link TransformerPolicy}. */
export interface TransformerPolicyOptions {
  /** Id of `<|end|>`: closes every action; free generation stops after it. */
  readonly endTokenId: number;
  /** More ids that end free generation besides `endTokenId` (a model's other eos ids). Default none. */
  readonly stopTokenIds?: readonly number[];
  /** Id used for padding (masked, so its value does not matter). Default 0. */
  readonly padTokenId?: number;
  /** Initial weights version. Default 0. */
  readonly version?: number;
  /**
   * A new prefill bucket starts when a row's new tokens or cached + new span fall below this
   * fraction of the bucket's. Default 0.75, or 0.9 when some row extends a cached prefix.
   * Padded prefill (`packed: false`) only; the packed prefill groups rows for attention alone.
   */
  readonly bucketRatio?: number;
  /** Buckets smaller than this are not split off (each bucket costs a forward pass). Default 8, or 1 when some row extends a cached prefix. Padded prefill (`packed: false`) only. */
  readonly minBucketRows?: number;
  /** Keep per-episode KV caches across turns (requests with an `episodeId`). Default true. */
  readonly reuseCaches?: boolean;
  /** Bytes of per-episode caches kept, least recently used evicted beyond (~1 KiB per cached token on the default model). Default 128 MiB. */
  readonly cacheMaxBytes?: number;
  /** Episodes whose caches are kept, least recently used evicted beyond. Default 16384. */
  readonly cacheMaxEpisodes?: number;
  /**
   * Most attention scores (rows x heads x new tokens x key slots, floats) one prefill call may
   * hold; larger batches are split into more calls so long contexts cannot exhaust the wasm heap.
   * Default 24 Mi (96 MB). With the packed prefill it caps each attention group instead.
   */
  readonly maxPrefillScores?: number;
  /**
   * Most new tokens one packed prefill call feeds; more rows are prefilled in several calls. Why:
   * a call's intermediates grow with its tokens (280 MiB per 4096 tokens at the SmolLM2-135M
   * shape with LoRA and the native kernels), and 64 evaluation prompts of 600 tokens at once outgrew the wasm heap.
   * Default unbounded.
   */
  readonly maxPrefillTokens?: number;
  /**
   * Packed ("varlen") prefill (issue #10 part F): every active row's new tokens in one ragged
   * `extendPacked` call over per-request one-row caches — no prefill buckets, no padding, no
   * merge of cached prefixes; only attention runs per group of similar rows. `false` selects the
   * padded, bucketed prefill (kept for comparison in the bench). Decode steps are the same either
   * way. Default true.
   */
  readonly packed?: boolean;
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
  /** Requests whose prefill started from their episode's cached prefix. */
  cacheHits: number;
  /** Context tokens not fed again thanks to those cached prefixes. */
  reusedTokens: number;
}

/** A cache and the request index of each of its rows. */
interface CachePart {
  readonly cache: KvCache;
  readonly owners: number[];
}

/** Chooses a token for request `requestIndex` from its logits row and allowed candidates. */
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
  private readonly caches: EpisodeCacheStore;

  constructor(
    readonly model: TransformerModel,
    private readonly options: TransformerPolicyOptions,
  ) {
    const v = model.config.vocabSize;
    if (!Number.isInteger(options.endTokenId) || options.endTokenId < 0 || options.endTokenId >= v) {
      throw InvalidArgumentError.format('endTokenId', `expected an id in [0, ${v}), got ${options.endTokenId}`);
    }
    this.currentVersion = options.version ?? 0;
    // Free generation draws from the ids the model can emit (see TransformerModel.restrictOutputs).
    this.vocab = Int32Array.from({ length: model.outputVocab }, (_, i) => i);
    this.caches = new EpisodeCacheStore({ maxBytes: options.cacheMaxBytes ?? 128 * 2 ** 20, maxEntries: options.cacheMaxEpisodes ?? 16_384 });
  }

  /** Weights version stamped on every result. */
  get version(): number {
    return this.currentVersion;
  }

  /** Sets the version after new weights were loaded into the model. */
  setVersion(version: number): void {
    if (!Number.isInteger(version) || version < 0) throw InvalidArgumentError.format('version', `expected an integer >= 0, got ${version}`);
    this.currentVersion = version;
    this.caches.clear(); // new weights: every cached key/value is stale
  }

  /** Frees the cached keys/values of episodes that ended (ids never seen are ignored). */
  releaseEpisodes(episodeIds: readonly string[]): void {
    this.caches.release(episodeIds);
  }

  /** Per-episode cache counters and size (for metrics and the bench). */
  get cacheStats(): Readonly<EpisodeCacheCounters> & { readonly episodes: number; readonly bytes: number } {
    return { ...this.caches.counters, episodes: this.caches.size, bytes: this.caches.byteSize };
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
    return this.decode(requests, maxNewTokens, new SamplingPicker(requests, streams, temperature, topP));
  }

  async greedyActions(requests: readonly ActRequest[], maxNewTokens: number): Promise<ActResult[]> {
    return this.decode(requests, maxNewTokens, new GreedyPicker(requests, this.vocab));
  }

  private async decode(requests: readonly ActRequest[], maxNewTokens: number, picker: Picker): Promise<ActResult[]> {
    if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1) throw InvalidArgumentError.format('maxNewTokens', `expected an integer >= 1, got ${maxNewTokens}`);
    const version = this.currentVersion;
    const stamp = this.caches.stampFor(this.model.trainableVariables().map((v) => v.dataId)); // new weights drop every cache
    const stats = emptyStats(); // local: overlapping calls must not mix their counters
    const { vocabSize, maxContext } = this.model.config;
    const limits: DecodeLimits = { vocabSize, maxContext, endTokenId: this.options.endTokenId, stopTokenIds: this.options.stopTokenIds, maxNewTokens };
    const states = requests.map((r, i) => initRequestState(r, i, limits));
    // The caches rows live in: one per prefill bucket, merged into one for the decode steps (only
    // the rows still deciding are merged, so finished rows are never copied again).
    let parts: CachePart[] | null = null;
    let rowOwner: number[] = []; // request index of each row, parts in order
    for (;;) {
      for (const s of states) if (!s.done) stats.forcedTokens += absorbForced(s);
      const active: number[] = [];
      for (let i = 0; i < states.length; i++) if (!states[i].done) active.push(i);
      // Rows about to be dropped: keep each episode's row for its next turn.
      for (const part of parts ?? []) {
        for (let row = 0; row < part.owners.length; row++) {
          const owner = part.owners[row];
          if (states[owner].done) this.keepRow(part.cache, row, requests[owner], states[owner], stamp);
        }
      }
      if (active.length === 0) break;
      let logits: Float32Array;
      if (parts === null) {
        const prefill = await this.prefill(active, states, requests, stamp, stats);
        parts = prefill.parts;
        logits = prefill.logits;
      } else {
        const kept: CachePart[] = parts.flatMap((part) => {
          const keep = part.owners.flatMap((owner, row) => (states[owner].done ? [] : [row]));
          if (keep.length === 0) return [];
          part.cache.selectRows(Int32Array.from(keep));
          return [{ cache: part.cache, owners: keep.map((row) => part.owners[row]) }];
        });
        const cache: KvCache = kept.length === 1 ? kept[0].cache : KvCache.merge(kept.map((p) => p.cache), maxNewTokens);
        parts = [{ cache, owners: kept.flatMap((p) => p.owners) }];
        logits = await this.step(cache, parts[0].owners.map((i) => states[i].pending), stats);
      }
      rowOwner = parts.flatMap((p) => p.owners);
      for (const s of rowOwner.map((i) => states[i])) s.pending = [];
      const v = this.model.config.vocabSize;
      for (let row = 0; row < rowOwner.length; row++) {
        const i = rowOwner[row];
        const s = states[i];
        const candidates = s.trie !== null ? s.trie.allowed(s.node) : s.grammar !== null ? this.emittable(s.grammar.allowed()) : this.vocab;
        const choice = picker.pick(logits.subarray(row * v, (row + 1) * v), candidates, i);
        appendToken(s, choice.tokenId, choice.logprob, 1, candidates, choice.entropy, choice.top);
        stats.sampledTokens++;
      }
    }
    // Last turns keep nothing (a request decided without the model may still hold an older entry).
    this.caches.release(requests.flatMap((r) => (r.lastTurn === true && r.episodeId !== undefined ? [r.episodeId] : [])));
    this.stats = stats;
    return states.map((s) => toResult(s, version));
  }

  /** A grammar's allowed ids the model can emit (a model whose outputs are restricted emits fewer than its vocabulary). */
  private emittable(ids: Int32Array): Int32Array {
    const n = this.vocab.length;
    if (ids.length === 0 || (ids[ids.length - 1] as number) < n) return ids;
    const kept = ids.filter((id) => id < n);
    if (kept.length === 0) throw InvalidArgumentError.format('grammar', `allows only ids at or above the model's ${n} output ids`);
    return kept;
  }

  /** Stores `row` of `cache` as the episode's prefix: its context plus the action tokens fed back. */
  private keepRow(cache: KvCache, row: number, request: ActRequest, s: RequestState, stamp: object): void {
    if (this.options.reuseCaches === false || request.episodeId === undefined || request.lastTurn === true) return;
    const fedActions = s.tokens.length - s.pending.length; // the last pending ones were never fed
    const fed = new Int32Array(request.contextTokens.length + fedActions);
    fed.set(request.contextTokens);
    for (let j = 0; j < fedActions; j++) fed[request.contextTokens.length + j] = s.tokens[j];
    this.caches.put(request.episodeId, cache.extractRow(row), fed, stamp);
  }

  /**
   * Prefills the pending tokens of `active` requests in length buckets (each extending its rows'
   * cached prefixes, if any). Returns the bucket caches with their row owners and the [rows, V]
   * next-token logits in the same row order.
   */
  private async prefill(
    active: number[],
    states: RequestState[],
    requests: readonly ActRequest[],
    stamp: object,
    stats: DecodeStats,
  ): Promise<{ parts: CachePart[]; logits: Float32Array }> {
    // Each active request's usable cached prefix: its ids lead `pending` (context + forced), so drop them.
    const hits = this.options.reuseCaches === false ? [] : this.caches.lookupRequests(active.map((i) => requests[i]), stamp);
    active.forEach((i, k) => {
      const hit = hits[k] ?? null;
      states[i].hit = hit;
      if (hit === null) return;
      states[i].pending = states[i].pending.slice(hit.reused);
      stats.cacheHits++;
      stats.reusedTokens += hit.reused;
    });
    if (this.options.packed !== false) return this.prefillPacked(active, states, stats);
    // Rows extending cached prefixes have ragged attention spans (tens to hundreds of slots); on
    // wasm every (row, head) attention product costs the same whatever the batch, so padding is
    // pure loss and tight buckets win (bench/scale/sampling.ts: 50-66 turns/s at 0.9/1 vs 21-34 at
    // 0.75/8 on 64 full-history BabyAI episodes). Fresh prefills keep the looser default.
    const anyHit = active.some((i) => states[i].hit !== null);
    const buckets = prefillBuckets(
      active.map((i) => ({ index: i, width: states[i].pending.length, span: (states[i].hit?.reused ?? 0) + states[i].pending.length })),
      {
        ratio: this.options.bucketRatio ?? (anyHit ? 0.9 : 0.75),
        minRows: this.options.minBucketRows ?? (anyHit ? 1 : 8),
        heads: this.model.config.nHeads,
        maxScores: this.options.maxPrefillScores ?? 24 * 2 ** 20,
      },
    );
    const caches: KvCache[] = [];
    const parts: Float32Array[] = [];
    for (const { rows: bucket, width } of buckets) {
      const extra = width + 8; // decode steps grow it (reserve) or merge it with room
      // Cached prefixes of different lengths are left-padded and masked into one cache (merge copies them).
      const cache = bucket.some((i) => states[i].hit !== null)
        ? KvCache.merge(bucket.map((i) => states[i].hit?.cache ?? this.model.createCache(1, 1)), extra)
        : this.model.createCache(bucket.length, extra);
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
    return { parts: caches.map((cache, k) => ({ cache, owners: buckets[k].rows })), logits };
  }

  /**
   * The packed prefill: one `extendPacked` call over every active row, each in its own one-row
   * cache (its episode's cached prefix copied, or empty) — ragged, no buckets, no padding. Each row
   * comes back as its own part, so the decode loop keeps finished rows without copying the others
   * and merges only the rows still deciding (decode steps then run padded `extend` over one merged
   * cache: measured faster there than packed steps, whose attention must read per-row caches).
   */
  private async prefillPacked(active: number[], states: RequestState[], stats: DecodeStats): Promise<{ parts: CachePart[]; logits: Float32Array }> {
    const caches = active.map((i) => {
      const s = states[i];
      const room = s.pending.length + 8; // decode steps grow it (reserve) or merge it with room
      return s.hit === null ? this.model.createCache(1, room) : KvCache.merge([s.hit.cache], room); // a copy: the store keeps its own
    });
    const tokens = active.map((i) => Int32Array.from(states[i].pending));
    for (const t of tokens) stats.realTokens += t.length;
    stats.paddedTokens += tokens.reduce((n, t) => n + t.length, 0);
    // Rows in calls of at most `maxPrefillTokens` new tokens (at least one row each), logits in row order.
    const limit = this.options.maxPrefillTokens ?? Number.POSITIVE_INFINITY;
    const logits: Float32Array[] = [];
    for (let start = 0; start < active.length; ) {
      let end = start + 1;
      let fed = tokens[start].length;
      while (end < active.length && fed + tokens[end].length <= limit) fed += tokens[end++].length;
      stats.modelCalls++;
      stats.prefillBuckets++;
      const out = this.model.extendPacked(caches.slice(start, end), tokens.slice(start, end), { maxScores: this.options.maxPrefillScores });
      try {
        logits.push((await out.data()) as Float32Array);
      } finally {
        out.dispose();
      }
      start = end;
    }
    let all = logits[0] as Float32Array;
    if (logits.length > 1) {
      all = new Float32Array(logits.reduce((n, l) => n + l.length, 0));
      let offset = 0;
      for (const l of logits) {
        all.set(l, offset);
        offset += l.length;
      }
    }
    return { parts: caches.map((cache, k) => ({ cache, owners: [active[k]] })), logits: all };
  }

  /** Feeds each row's pending tokens (left-padded to a common length) and reads back the logits. */
  private async step(cache: KvCache, pending: number[][], stats: DecodeStats): Promise<Float32Array> {
    const width = Math.max(...pending.map((p) => p.length));
    const rows = pending.length;
    if (width === 1 && pending.every((p) => p.length === 1)) {
      // One token per row: the native decode step where it runs (the same logits as extend).
      const native = this.model.decodeStep(cache, Int32Array.from(pending, (p) => p[0] as number));
      if (native !== null) {
        stats.realTokens += rows;
        stats.paddedTokens += rows;
        stats.modelCalls++;
        return native;
      }
    }
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
  return { modelCalls: 0, prefillBuckets: 0, paddedTokens: 0, realTokens: 0, sampledTokens: 0, forcedTokens: 0, cacheHits: 0, reusedTokens: 0 };
}
