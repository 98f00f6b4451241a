import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { tf } from '../../src/backend/tf.js';
import type { ActRequest, ActResult } from '../../src/core/policy.js';
import type { TransformerModel } from '../../src/models/transformer/model.js';
import { TransformerPolicy } from '../../src/models/transformer-policy.js';
import { packBatch, randomSeq, type SeqTargets, tinyModel } from './transformer-fixtures.js';

const END = 5;
let model: TransformerModel;

beforeAll(async () => {
  await tf.setBackend('cpu');
  model = tinyModel(11);
});
afterAll(() => model.dispose());

const seq = (...ids: number[]) => Int32Array.from(ids);

/** `count` random actions of 2..4 tokens (the last is END). */
function randomChoices(rng: Rng, count: number): Int32Array[] {
  return Array.from({ length: count }, () => {
    const body = randomSeq(rng, 1 + rng.int(3));
    return Int32Array.from([...body, END]);
  });
}

function requestsFor(seed: number, n: number, freeEvery = 0): ActRequest[] {
  const rng = Rng.fromSeed(seed);
  return Array.from({ length: n }, (_, i) => ({
    contextTokens: randomSeq(rng, 3 + rng.int(20)),
    actionChoices: freeEvery > 0 && i % freeEvery === 0 ? null : randomChoices(rng, 2 + rng.int(7)),
  }));
}

/** Re-scores results with forwardTrain on exactly the sampled tokens and recorded allowed sets. */
function rescore(requests: readonly ActRequest[], results: readonly ActResult[], temperature: number): Float32Array {
  const seqs: SeqTargets[] = requests.map((r, i) => {
    const res = results[i];
    const ids = Int32Array.from([...r.contextTokens, ...res.tokens]);
    const positions = Array.from(res.tokens, (_, j) => r.contextTokens.length - 1 + j);
    const c = res.constraint;
    const allowed = Array.from(res.tokens, (_, j) => (c === null ? [] : Array.from(c.allowedIds.subarray(c.allowedOffsets[j], c.allowedOffsets[j + 1]))));
    return { ids, positions, allowed };
  });
  const out = model.forwardTrain(packBatch(seqs), temperature);
  const lp = out.logprobs.dataSync().slice() as Float32Array;
  tf.dispose([out.logprobs, out.entropy]);
  return lp;
}

const flatLogprobs = (results: readonly ActResult[]) => Float32Array.from(results.flatMap((r) => Array.from(r.logprobs)));

describe('TransformerPolicy.sampleActions', () => {
  it('samples the same action for a seeded request whatever else shares its batch', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END, minBucketRows: 1 });
    const options = { temperature: 1.5, topP: 1, maxNewTokens: 8 };
    const others = requestsFor(31, 6);
    const seeded = requestsFor(32, 4).map((r, i) => ({ ...r, seed: 1000 + i }));
    const alone = await Promise.all(seeded.map(async (r) => (await policy.sampleActions([r], options, Rng.fromSeed(1)))[0] as ActResult));
    const mixed = await policy.sampleActions([others[0], seeded[0], others[1], seeded[1], seeded[2], ...others.slice(2), seeded[3]] as ActRequest[], options, Rng.fromSeed(2));
    const mixedSeeded = [mixed[1], mixed[3], mixed[4], mixed[mixed.length - 1]] as ActResult[];
    expect(mixedSeeded.map((r) => Array.from(r.tokens))).toEqual(alone.map((r) => Array.from(r.tokens)));
    // The seed, not the batch rng, drives the draw: other seeds give other choices.
    const outcomes = new Set<string>();
    for (let k = 0; k < 30; k++) {
      const [r] = await policy.sampleActions([{ ...(seeded[0] as ActRequest), seed: 5000 + k }], options, Rng.fromSeed(1));
      outcomes.add(Array.from((r as ActResult).tokens).join());
    }
    expect(outcomes.size).toBeGreaterThan(1);
  });

  it('records logprobs that forwardTrain reproduces on the same tokens and constraints (token-in, token-out)', async () => {
    // The padded path with several buckets and with one, then the packed path (issue #10 part F).
    for (const [bucketRatio, minBucketRows, packed] of [
      [0.75, 1, false],
      [0, 8, false],
      [0.75, 1, true],
    ] as const) {
      const policy = new TransformerPolicy(model, { endTokenId: END, bucketRatio, minBucketRows, packed });
      const requests = requestsFor(1, 12, 4);
      const results = await policy.sampleActions(requests, { temperature: 0.8, topP: 1, maxNewTokens: 5 }, Rng.fromSeed(2));
      if (bucketRatio > 0 && !packed) expect(policy.lastStats.prefillBuckets).toBeGreaterThan(1);
      const recorded = flatLogprobs(results);
      const rescored = rescore(requests, results, 0.8);
      expect(recorded.length).toBeGreaterThan(20);
      let maxDiff = 0;
      for (let i = 0; i < recorded.length; i++) maxDiff = Math.max(maxDiff, Math.abs(recorded[i] - rescored[i]));
      expect(maxDiff).toBeLessThan(1e-5);
    }
  });

  it('forces single-choice tokens with lossMask 0, logprob 0 and no model call', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END });
    const shared = { contextTokens: seq(1, 4, 9, 4), actionChoices: [seq(10, 11, 12, END), seq(10, 11, 13, END)] };
    const [r] = await policy.sampleActions([shared], { temperature: 1, topP: 1, maxNewTokens: 8 }, Rng.fromSeed(3));
    expect(Array.from(r.tokens.subarray(0, 2))).toEqual([10, 11]);
    expect([12, 13]).toContain(r.tokens[2]);
    expect(r.tokens[3]).toBe(END);
    expect(Array.from(r.lossMask)).toEqual([0, 0, 1, 0]);
    expect(r.logprobs[0]).toBe(0);
    expect(r.logprobs[1]).toBe(0);
    expect(r.logprobs[2]).toBeLessThan(0);
    expect(r.logprobs[3]).toBe(0);
    expect(Array.from(r.constraint!.allowedOffsets)).toEqual([0, 1, 2, 4, 5]);
    expect(Array.from(r.constraint!.allowedIds)).toEqual([10, 11, 12, 13, END]);
    expect(policy.lastStats.modelCalls).toBe(1); // the prefill only: the END after the choice is forced

    const single = { contextTokens: seq(1, 4, 9, 4), actionChoices: [seq(20, 21, END)] };
    const results = await policy.sampleActions([single, single], { temperature: 1, topP: 1, maxNewTokens: 8 }, Rng.fromSeed(3));
    expect(policy.lastStats.modelCalls).toBe(0);
    expect(Array.from(results[1].tokens)).toEqual([20, 21, END]);
    expect(Array.from(results[1].lossMask)).toEqual([0, 0, 0]);
  });

  it('always returns one of the choices, in request order', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END });
    const requests = requestsFor(4, 24);
    const results = await policy.sampleActions(requests, { temperature: 1.5, topP: 0.9, maxNewTokens: 8 }, Rng.fromSeed(5));
    results.forEach((res, i) => {
      const asText = (a: Int32Array) => Array.from(a).join(',');
      expect(requests[i].actionChoices!.map(asText)).toContain(asText(res.tokens));
      expect(res.lossMask.length).toBe(res.tokens.length);
    });
  });

  it('is deterministic for a fixed rng seed', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END });
    const requests = requestsFor(6, 16, 3);
    const opts = { temperature: 1, topP: 1, maxNewTokens: 6 };
    const a = await policy.sampleActions(requests, opts, Rng.fromSeed(7));
    const b = await policy.sampleActions(requests, opts, Rng.fromSeed(7));
    const c = await policy.sampleActions(requests, opts, Rng.fromSeed(8));
    const tokens = (rs: ActResult[]) => rs.map((r) => Array.from(r.tokens).join(',')).join('|');
    expect(tokens(a)).toBe(tokens(b));
    expect(Array.from(flatLogprobs(a))).toEqual(Array.from(flatLogprobs(b)));
    expect(tokens(a)).not.toBe(tokens(c));
  });

  it('stops free generation at <|end|> or maxNewTokens', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END });
    const requests = Array.from({ length: 32 }, (_, i) => ({ contextTokens: randomSeq(Rng.fromSeed(i), 5), actionChoices: null }));
    const results = await policy.sampleActions(requests, { temperature: 3, topP: 1, maxNewTokens: 24 }, Rng.fromSeed(9));
    let early = 0;
    for (const r of results) {
      expect(r.constraint).toBeNull();
      expect(r.tokens.length).toBeLessThanOrEqual(24);
      expect(Array.from(r.lossMask).every((m) => m === 1)).toBe(true);
      const endAt = r.tokens.indexOf(END);
      if (r.tokens.length < 24) {
        expect(endAt).toBe(r.tokens.length - 1);
        early++;
      } else {
        expect(endAt === -1 || endAt === 23).toBe(true);
      }
    }
    expect(early).toBeGreaterThan(0);
  });

  it('stamps the policy version and leaks no tensors', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END });
    policy.setVersion(3);
    const before = tf.memory().numTensors;
    const results = await policy.sampleActions(requestsFor(10, 10, 2), { temperature: 1, topP: 1, maxNewTokens: 6 }, Rng.fromSeed(1));
    await policy.greedyActions(requestsFor(11, 5, 2), 6);
    expect(tf.memory().numTensors).toBe(before);
    expect(results.every((r) => r.policyVersion === 3)).toBe(true);
    expect(policy.version).toBe(3);
  });

  it('answers an empty request list with no results and no model call', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END });
    expect(await policy.sampleActions([], { temperature: 1, topP: 1, maxNewTokens: 4 }, Rng.fromSeed(0))).toEqual([]);
    expect(policy.lastStats.modelCalls).toBe(0);
  });

  it('rejects bad requests naming the field', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END });
    const opts = { temperature: 1, topP: 1, maxNewTokens: 4 };
    await expect(policy.sampleActions([{ contextTokens: seq(), actionChoices: null }], opts, Rng.fromSeed(0))).rejects.toThrow(/requests\[0\]\.contextTokens/);
    await expect(policy.sampleActions([{ contextTokens: seq(1), actionChoices: [seq(7, 8)] }], opts, Rng.fromSeed(0))).rejects.toThrow(
      /actionChoices\[0\].*<\|end\|>/,
    );
    await expect(policy.sampleActions([{ contextTokens: seq(1), actionChoices: null }], { ...opts, topP: 0 }, Rng.fromSeed(0))).rejects.toThrow(
      InvalidArgumentError,
    );
    const long = { contextTokens: new Int32Array(64).fill(7), actionChoices: null };
    await expect(policy.sampleActions([long], opts, Rng.fromSeed(0))).rejects.toThrow(/maxContext/);
  });
});

describe('TransformerPolicy.greedyActions', () => {
  it('is deterministic, picks the argmax and records temperature-1 logprobs', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END, minBucketRows: 1 });
    const requests = requestsFor(12, 8, 4);
    const a = await policy.greedyActions(requests, 5);
    const b = await policy.greedyActions(requests, 5);
    expect(a.map((r) => Array.from(r.tokens))).toEqual(b.map((r) => Array.from(r.tokens)));
    const rescored = rescore(requests, a, 1);
    const recorded = flatLogprobs(a);
    for (let i = 0; i < recorded.length; i++) expect(Math.abs(recorded[i] - rescored[i])).toBeLessThan(1e-5);
    // the first generated token of a free request is the argmax of the full-vocabulary logits
    const r0 = requests[0];
    const logits = model.forwardLogits(r0.contextTokens, new Uint8Array(r0.contextTokens.length).fill(1), 1, r0.contextTokens.length);
    const last = logits.dataSync().slice((r0.contextTokens.length - 1) * 40);
    logits.dispose();
    expect(a[0].tokens[0]).toBe(last.indexOf(Math.max(...last)));
  });
});

describe('TransformerPolicy with a grammar (ActRequest.grammar)', () => {
  /** A grammar that allows only ids 7 and 9 for `length` tokens, then only END; it records what it was told. */
  function twoIdGrammar(length: number) {
    const chosen: number[] = [];
    return {
      chosen,
      allowed: () => (chosen.length < length ? Int32Array.of(7, 9) : Int32Array.of(END)),
      accept: (id: number) => {
        chosen.push(id);
      },
    };
  }

  it('draws each token among the ids the grammar allows, tells it each id, and stops where it allows only the end', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END, minBucketRows: 1 });
    const grammars = [twoIdGrammar(3), twoIdGrammar(5)];
    const requests = grammars.map((grammar, i) => ({ contextTokens: seq(1, 2, 3 + i), actionChoices: null, grammar, seed: 40 + i }));
    const [sampled] = await policy.sampleActions(requests.slice(0, 1), { temperature: 1, topP: 1, maxNewTokens: 12 }, Rng.fromSeed(1));
    const [greedy] = await policy.greedyActions(requests.slice(1), 12);
    for (const [i, result] of [sampled, greedy].entries()) {
      const grammar = grammars[i] as ReturnType<typeof twoIdGrammar>;
      const length = i === 0 ? 3 : 5;
      expect(Array.from(result?.tokens ?? [])).toEqual(grammar.chosen);
      expect(grammar.chosen).toHaveLength(length + 1);
      expect(grammar.chosen.slice(0, length).every((id) => id === 7 || id === 9)).toBe(true);
      expect(grammar.chosen.at(-1)).toBe(END);
      expect(result?.finishReason).toBe('stop');
    }
  });

  it('refuses a grammar beside action choices, naming the request', async () => {
    const policy = new TransformerPolicy(model, { endTokenId: END });
    const request = { contextTokens: seq(1, 2), actionChoices: [seq(3, END)], grammar: twoIdGrammar(1) };
    await expect(policy.greedyActions([request], 4)).rejects.toThrow(/requests\[0\]\.grammar/);
  });
});
