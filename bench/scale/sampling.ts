/**
 * The sampling part of `npm run bench -- scale` (issue #10): tokens/s of the default policy model
 * (configs/babyai-grpo.yaml's shape: d64, 2 layers, 4 heads, ffn 172; context 1024) over
 * multi-turn BabyAI episodes, 64 live episodes served in one batch per turn (B = 64) against the
 * same episodes served one request at a time (B = 1).
 *
 * The measured tokens:
 * - model-processed tokens: real (non-pad) tokens run through the model, i.e. each turn's new
 *   context tokens (after the cached prefix) plus the sampled/forced action tokens fed back
 *   during decoding. Per-episode KV reuse is ON in both arms, so cached prefixes are not counted;
 * - sampled tokens: tokens chosen from model logits (forced trie tokens excluded).
 * Both arms run the same episodes with per-turn seeds, so they process exactly the same tokens
 * (results do not depend on batching or caching); the ratio is the time ratio. Only policy calls
 * are timed (context building and environment steps are excluded). Also measured: the same turns
 * on the padded, bucketed path (`packed: false`, part D) and without KV reuse, ragged batches as
 * one padded bucket vs grouped by length, decode-heavy turns (free generation), and model-only
 * `extend` / `extendPacked` rates for the two regimes a turn is made of.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Rng } from '../../src/core/rng.js';
import '../../src/envs/index.js';
import type { Environment } from '../../src/envs/environment.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { describeBackend, selectBackend } from '../../src/backend/select.js';
import { KvCache } from '../../src/models/kv-cache.js';
import { buildContext, encodeActionChoices, type PastTurn } from '../../src/models/context.js';
import type { ActRequest, ActResult } from '../../src/core/policy.js';
import { trainBpe } from '../../src/models/tokenizer/index.js';
import type { BpeTokenizer } from '../../src/models/tokenizer/index.js';
import { TransformerModel } from '../../src/models/transformer/model.js';
import { type DecodeStats, TransformerPolicy, type TransformerPolicyOptions } from '../../src/models/transformer-policy.js';
import type { ScaleOptions, ScaleSection } from './section.js';

// The default policy's shape; its RoPE table is sized for 1024 tokens (no weights depend on it) so
// that full-history episodes of up to HORIZON turns fit without truncation.
const MODEL = { dModel: 64, nLayers: 2, nHeads: 4, ffnHidden: 172, maxContext: 1024 };
const LEVELS = ['GoToRedBall', 'GoToLocalS8N7', 'PickupLoc'];
const EPISODES = 64;
const HORIZON = 8;
const SAMPLING = { temperature: 1, topP: 1, maxNewTokens: 24 };
const FREE_TOKENS = 16;

interface LiveEpisode {
  id: string;
  env: Environment;
  turns: PastTurn[];
  observation: { text: string; availableActions?: readonly string[] };
  seed: number;
}

/** Totals of one arm. */
interface ArmResult {
  seconds: number;
  realTokens: number;
  sampledTokens: number;
  modelCalls: number;
  reusedTokens: number;
  contextTokens: number;
  turns: number;
}

/**
 * Runs `rounds` turns of EPISODES live episodes (an ended episode is replaced by a new task) and
 * times the policy calls. `batched`: one call per round; otherwise one call per request.
 */
async function runArm(
  tokenizer: BpeTokenizer,
  model: TransformerModel,
  rounds: number,
  batched: boolean,
  options: Partial<TransformerPolicyOptions>,
  free = false,
): Promise<ArmResult> {
  const policy = new TransformerPolicy(model, { endTokenId: tokenizer.specialId('end'), ...options });
  const spec = getEnvironmentSpec('babyai');
  const contextPolicy = { history: 'full' as const, includeInstruction: false, maxContextTokens: MODEL.maxContext - SAMPLING.maxNewTokens };
  const sampling = free ? { ...SAMPLING, maxNewTokens: FREE_TOKENS } : SAMPLING;
  let nextTask = 0;
  const start = (slot: number): LiveEpisode => {
    const env = spec.create({ settings: { levels: LEVELS } });
    const task = 1 + 997 * nextTask++;
    const observation = env.reset(task) as LiveEpisode['observation'];
    return { id: `ep-${task}`, env, turns: [], observation, seed: 31 * task + slot };
  };
  const live = Array.from({ length: EPISODES }, (_, i) => start(i));
  const total: ArmResult = { seconds: 0, realTokens: 0, sampledTokens: 0, modelCalls: 0, reusedTokens: 0, contextTokens: 0, turns: 0 };
  const add = (s: Readonly<DecodeStats>) => {
    total.realTokens += s.realTokens;
    total.sampledTokens += s.sampledTokens;
    total.modelCalls += s.modelCalls;
    total.reusedTokens += s.reusedTokens;
  };
  for (let round = 0; round < rounds; round++) {
    const requests: ActRequest[] = live.map((ep) => ({
      contextTokens: buildContext(tokenizer, { instruction: '', pastTurns: ep.turns, observationText: ep.observation.text }, contextPolicy),
      // free: unconstrained generation up to FREE_TOKENS (a decode-heavy turn, like Thought: ... text).
      actionChoices: free ? null : encodeActionChoices(tokenizer, ep.observation.availableActions ?? []),
      seed: (ep.seed + ep.turns.length * 7919) & 0x7fffffff,
      episodeId: ep.id,
      lastTurn: ep.turns.length + 1 === HORIZON,
    }));
    let results: ActResult[];
    const t0 = performance.now();
    if (batched) {
      results = await policy.sampleActions(requests, sampling, Rng.fromSeed(round));
      add(policy.lastStats);
    } else {
      results = [];
      for (const request of requests) {
        results.push(...(await policy.sampleActions([request], sampling, Rng.fromSeed(round))));
        add(policy.lastStats);
      }
    }
    total.seconds += (performance.now() - t0) / 1000;
    total.turns += requests.length;
    total.contextTokens += requests.reduce((n, r) => n + r.contextTokens.length, 0);
    live.forEach((ep, i) => {
      const result = results[i] as ActResult;
      const step = ep.env.step(tokenizer.decode(result.tokens)) as { done: boolean; observation: LiveEpisode['observation'] };
      ep.turns.push({ observationText: ep.observation.text, actionTokens: result.tokens });
      ep.observation = step.observation;
      if (step.done || ep.turns.length >= HORIZON) {
        policy.releaseEpisodes([ep.id]);
        void ep.env.close();
        live[i] = start(i);
      }
    });
  }
  for (const ep of live) void ep.env.close();
  return total;
}

/**
 * Model-only tokens/s of `extend` on a cache of `past` real tokens per row, feeding `chunk` new
 * tokens to each of `rows` rows (a decode step when chunk = 1, an observation prefill when ~90):
 * the two regimes a turn is made of, at B = 1 and B = 64.
 */
function extendRate(model: TransformerModel, rows: number, past: number, chunk: number, seconds: number, packed = false): number {
  const rng = Rng.fromSeed(rows * 1000 + chunk);
  const prefix = model.createCache(rows, past);
  model.extend(prefix, Int32Array.from({ length: rows * past }, () => 6 + rng.int(500)), new Uint8Array(rows * past).fill(1), past).dispose();
  const ids = Int32Array.from({ length: rows * chunk }, () => 6 + rng.int(500));
  const mask = new Uint8Array(rows * chunk).fill(1);
  const rowIds = Array.from({ length: rows }, (_, r) => ids.subarray(r * chunk, (r + 1) * chunk));
  let tokens = 0;
  let timed = 0;
  while (timed < seconds * 1000) {
    // A fresh copy of the prefix each time (not timed): one merged cache, or one cache per row.
    const cache = KvCache.merge([prefix], chunk);
    const rowCaches = packed ? Array.from({ length: rows }, (_, r) => KvCache.merge([prefix.extractRow(r)], chunk)) : [];
    const t0 = performance.now();
    const logits = packed ? model.extendPacked(rowCaches, rowIds) : model.extend(cache, ids, mask, chunk);
    logits.dataSync();
    logits.dispose();
    timed += performance.now() - t0;
    tokens += rows * chunk;
  }
  return tokens / (timed / 1000);
}

const rate = (n: number, seconds: number) => n / seconds;
const fmt = (x: number) => x.toFixed(0);

/**
 * Measures sampling throughput batched (B = 64) vs one episode at a time, with and without
 * per-episode KV reuse.
 * @example const section = await measure({ quick: true });
 */
export async function measure(options: ScaleOptions): Promise<ScaleSection> {
  const backend = await selectBackend('auto');
  const spec = getEnvironmentSpec('babyai');
  const tokenizer = trainBpe(spec.corpus({ settings: { levels: LEVELS } }, 400, 1), { vocabSize: 512 });
  const model = new TransformerModel(
    { vocabSize: tokenizer.vocabSize, ...MODEL, ropeTheta: 10000, rmsNormEps: 1e-5, tieEmbeddings: false },
    Rng.fromSeed(1),
  );
  const rounds = options.quick ? 4 : 12;
  const loadBefore = loadavg()[0] as number;
  // Warm-up (kernel compilation, XNNPACK packing) outside the timed arms.
  await runArm(tokenizer, model, 2, true, {});
  const batched = await runArm(tokenizer, model, rounds, true, {});
  const single = await runArm(tokenizer, model, rounds, false, {});
  // The padded, bucketed path (part D) on the same turns: what packed calls (part F) replaced.
  const batchedPadded = await runArm(tokenizer, model, rounds, true, { packed: false });
  const singlePadded = await runArm(tokenizer, model, rounds, false, { packed: false });
  // Decode-heavy turns: unconstrained generation (the untrained model rarely ends early).
  const freeRounds = options.quick ? 2 : 4;
  const freeBatched = await runArm(tokenizer, model, freeRounds, true, {}, true);
  const freeSingle = await runArm(tokenizer, model, freeRounds, false, {}, true);
  const batchedNoReuse = await runArm(tokenizer, model, rounds, true, { reuseCaches: false });
  const singleNoReuse = await runArm(tokenizer, model, Math.max(2, rounds / 2), false, { reuseCaches: false });
  const loose = await runArm(tokenizer, model, rounds, true, { packed: false, bucketRatio: 0.75, minBucketRows: 8 });
  const padded = await runArm(tokenizer, model, rounds, true, { packed: false, bucketRatio: 0 }); // split only at the memory cap
  const secs = options.quick ? 0.5 : 2;
  const decode = { b64: extendRate(model, 64, 200, 1, secs), b1: extendRate(model, 1, 200, 1, secs) };
  const chunk = { b64: extendRate(model, 64, 150, 90, secs), b1: extendRate(model, 1, 150, 90, secs) };
  const decodePacked = { b64: extendRate(model, 64, 200, 1, secs, true), b1: extendRate(model, 1, 200, 1, secs, true) };
  const chunkPacked = { b64: extendRate(model, 64, 150, 90, secs, true), b1: extendRate(model, 1, 150, 90, secs, true) };
  model.dispose();

  const processed = (a: ArmResult) => rate(a.realTokens, a.seconds);
  const sampled = (a: ArmResult) => rate(a.sampledTokens, a.seconds);
  const turns = (a: ArmResult) => rate(a.turns, a.seconds);
  return {
    title: 'sampling (default policy model, multi-turn BabyAI, B = 64 vs 1)',
    rows: [
      ['model-processed tokens/s, batched B=64, KV reuse', fmt(processed(batched))],
      ['model-processed tokens/s, one at a time, KV reuse', fmt(processed(single))],
      ['ratio batched / one at a time (processed tokens)', `${(processed(batched) / processed(single)).toFixed(2)}x`],
      ['padded bucketed calls (part D), tokens/s batched / one at a time', `${fmt(processed(batchedPadded))} / ${fmt(processed(singlePadded))} (${(processed(batchedPadded) / processed(singlePadded)).toFixed(2)}x)`],
      ['packed vs padded calls, batched B=64 / one at a time', `${(processed(batched) / processed(batchedPadded)).toFixed(2)}x / ${(processed(single) / processed(singlePadded)).toFixed(2)}x`],
      ['batched packed (B=64) / one at a time padded (part D)', `${(processed(batched) / processed(singlePadded)).toFixed(2)}x`],
      ['sampled tokens/s, batched B=64', fmt(sampled(batched))],
      ['sampled tokens/s, one at a time', fmt(sampled(single))],
      ['ratio batched / one at a time (sampled tokens)', `${(sampled(batched) / sampled(single)).toFixed(2)}x`],
      ['turns/s, batched / one at a time', `${fmt(turns(batched))} / ${fmt(turns(single))}`],
      [
        `free generation (<= ${FREE_TOKENS} sampled tokens/turn), sampled tokens/s batched / one at a time`,
        `${fmt(sampled(freeBatched))} / ${fmt(sampled(freeSingle))} (${(sampled(freeBatched) / sampled(freeSingle)).toFixed(2)}x; processed ${(processed(freeBatched) / processed(freeSingle)).toFixed(2)}x)`,
      ],
      ['context tokens/s (whole prompts served), batched, KV reuse vs none', `${fmt(rate(batched.contextTokens, batched.seconds))} vs ${fmt(rate(batchedNoReuse.contextTokens, batchedNoReuse.seconds))} (${(batchedNoReuse.seconds / batched.seconds).toFixed(2)}x)`],
      ['context tokens/s, one at a time, KV reuse vs none', `${fmt(rate(single.contextTokens, single.seconds))} vs ${fmt(rate(singleNoReuse.contextTokens, singleNoReuse.seconds))} (${(rate(single.contextTokens, single.seconds) / rate(singleNoReuse.contextTokens, singleNoReuse.seconds)).toFixed(2)}x)`],
      ['ragged batch, turns/s: packed vs padded tight buckets (0.9/1) vs loose (0.75/8) vs one padded bucket', `${fmt(turns(batched))} vs ${fmt(turns(batchedPadded))} vs ${fmt(turns(loose))} vs ${fmt(turns(padded))}`],
      ['prompt tokens reused from cache (batched arm)', `${((100 * batched.reusedTokens) / batched.contextTokens).toFixed(0)}%`],
      ['model calls per turn, batched / one at a time', `${(batched.modelCalls / batched.turns).toFixed(2)} / ${(single.modelCalls / single.turns).toFixed(2)}`],
      ['decode step (1 token/row over 200 cached) tokens/s, B=64 vs B=1, padded extend', `${fmt(decode.b64)} vs ${fmt(decode.b1)} (${(decode.b64 / decode.b1).toFixed(2)}x)`],
      ['the same, packed extendPacked', `${fmt(decodePacked.b64)} vs ${fmt(decodePacked.b1)} (${(decodePacked.b64 / decodePacked.b1).toFixed(2)}x)`],
      ['observation prefill (90 tokens/row over 150 cached) tokens/s, B=64 vs B=1, padded extend', `${fmt(chunk.b64)} vs ${fmt(chunk.b1)} (${(chunk.b64 / chunk.b1).toFixed(2)}x)`],
      ['the same, packed extendPacked', `${fmt(chunkPacked.b64)} vs ${fmt(chunkPacked.b1)} (${(chunkPacked.b64 / chunkPacked.b1).toFixed(2)}x)`],
    ],
    notes: [
      `${describeBackend(backend)}; ${EPISODES} live BabyAI episodes (${LEVELS.join(', ')}), horizon ${HORIZON}, history full, constrained decoding, ${rounds} turns each arm`,
      `mean prompt ${(batched.contextTokens / batched.turns).toFixed(0)} tokens, ${(batched.realTokens / batched.turns).toFixed(1)} processed and ${(batched.sampledTokens / batched.turns).toFixed(2)} sampled tokens per turn`,
      `load average ${loadBefore.toFixed(2)} before, ${(loadavg()[0] as number).toFixed(2)} after`,
    ],
  };
}
