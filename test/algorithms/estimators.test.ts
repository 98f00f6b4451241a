import { describe, expect, it } from 'vitest';
import type { AdvantageInput, AdvantageOutput, EstimatorOptions } from '../../src/algorithms/advantage-input.js';
import {
  gaeReference,
  grpoAdvantagesReference,
  reinforcePlusPlusReference,
  reinforceReference,
  rlooAdvantagesReference,
} from '../../src/algorithms/advantages-reference.js';
import { advantageEstimators, computeAdvantages } from '../../src/algorithms/advantages.js';
import { Rng } from '../../src/core/rng.js';
import { groupIds, mask, onAgentTokens, rewards, T, turnIds, values } from './multi-turn-fixture.js';

const fixture = { rewards, mask, seqLen: T, groupIds, values, turnIds };
const gaeToken = { name: 'gae', gamma: 0.9, lambda: 0.8, level: 'token', whiten: false } as const;
const gaeTurn = { ...gaeToken, level: 'turn' } as const;

function expectClose(actual: Float32Array, expected: Float32Array, digits = 5): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((x, i) => {
    expect(x, `index ${i}`).toBeCloseTo(expected[i], digits);
  });
}

describe('estimators on a hand-built multi-turn batch', () => {
  it('token-level GAE: TD steps over agent tokens only, environment tokens carried through', () => {
    const out = computeAdvantages({ ...fixture, options: gaeToken });
    // Row 0: δ2 = 1 − .6 = .4; δ1 = .9·.6 − .4 = .14, A1 = .14 + .72·.4; δ0 = .9·.4 − .2 = .16, A0 = .16 + .72·A1.
    expectClose(out.advantages, onAgentTokens([[0.46816, 0.428, 0.4], [0.2240864, 0.07512, -0.104, 0.3], [0.1732, 0.31, 0.5], [-0.3]]));
    expectClose(out.returns, onAgentTokens([[0.66816, 0.828, 1], [0.3240864, 0.37512, 0.396, 0.5], [0.6732, 0.81, 1], [0]]));
  });

  it('turn-level GAE: one TD step per turn, value at the turn start, advantage broadcast to the turn', () => {
    const out = computeAdvantages({ ...fixture, options: gaeTurn });
    // Row 1: turns (R, V) = (0, .1), (0, .3), (.5, .2): A2 = .3; A1 = .9·.2 − .3 + .72·.3 = .096; A0 = .17 + .72·.096.
    expectClose(out.advantages, onAgentTokens([[0.628, 0.628, 0.4], [0.23912, 0.096, 0.096, 0.3], [0.5, 0.5, 0.5], [-0.3]]));
    expectClose(out.returns, onAgentTokens([[0.828, 0.828, 1], [0.33912, 0.396, 0.396, 0.5], [1, 1, 1], [0]]));
  });

  it('REINFORCE++: discounted returns over agent tokens, whitened over the whole batch', () => {
    const out = computeAdvantages({ ...fixture, options: { name: 'reinforcePlusPlus', gamma: 0.9 } });
    const returns = [[0.81, 0.9, 1], [0.3645, 0.405, 0.45, 0.5], [0.81, 0.9, 1], [0]];
    expectClose(out.returns, onAgentTokens(returns));
    const flat = returns.flat();
    const mean = flat.reduce((a, b) => a + b, 0) / flat.length;
    const std = Math.sqrt(flat.reduce((a, b) => a + (b - mean) ** 2, 0) / (flat.length - 1));
    expectClose(out.advantages, onAgentTokens(returns.map((row) => row.map((g) => (g - mean) / std))), 4);
  });

  it('GRPO and Dr. GRPO: one group-normalised score per trajectory on all its agent tokens', () => {
    // Scores: a = {1, 0.5} (mean .75, unbiased std √.125), b = {1, 0} (mean .5, std √.5).
    const grpo = computeAdvantages({ ...fixture, options: { name: 'grpo', normalizeStd: true, epsilon: 0 } });
    const s = Math.SQRT1_2;
    expectClose(grpo.advantages, onAgentTokens([[s, s, s], [-s, -s, -s, -s], [s, s, s], [-s]]));
    const dr = computeAdvantages({ ...fixture, options: { name: 'grpo', normalizeStd: false, epsilon: 1e-6 } });
    expectClose(dr.advantages, onAgentTokens([[0.25, 0.25, 0.25], [-0.25, -0.25, -0.25, -0.25], [0.5, 0.5, 0.5], [-0.5]]));
  });

  it('RLOO: score minus the mean of the other samples of the group', () => {
    const out = computeAdvantages({ ...fixture, options: { name: 'rloo' } });
    expectClose(out.advantages, onAgentTokens([[0.5, 0.5, 0.5], [-0.5, -0.5, -0.5, -0.5], [1, 1, 1], [-1]]));
  });

  it('REINFORCE: returns minus a running baseline that carries over to the next batch', () => {
    const options = { name: 'reinforce', gamma: 1, baselineMomentum: 0.9 } as const;
    const first = computeAdvantages({ ...fixture, options });
    const b1 = 8 / 11; // token-mean return: (3·1 + 4·0.5 + 3·1 + 1·0) / 11
    expectClose(first.advantages, onAgentTokens([[1, 1, 1], [0.5, 0.5, 0.5, 0.5], [1, 1, 1], [0]].map((r) => r.map((g) => g - b1))));
    expect(first.state?.runningBaseline).toBeCloseTo(b1, 6);
    // Second batch: all rewards 0 → advantages −b1, and the baseline moves to .9·b1 + .1·0.
    const second = computeAdvantages({ ...fixture, rewards: new Float32Array(rewards.length), state: first.state, options });
    expectClose(second.advantages, onAgentTokens([[1, 1, 1], [1, 1, 1, 1], [1, 1, 1], [1]].map((r) => r.map(() => -b1))));
    expect(second.state?.runningBaseline).toBeCloseTo(0.9 * b1, 6);
    expect(second.state?.batches).toBe(2);
  });
});

describe('estimator properties', () => {
  it('GRPO advantages are zero-mean per group', () => {
    const rng = Rng.fromSeed(11);
    for (let trial = 0; trial < 20; trial++) {
      const input = randomBatch(rng, { name: 'grpo', normalizeStd: rng.next() < 0.5, epsilon: 1e-6 }, false);
      const perRow = rowValues(input, computeAdvantages(input).advantages);
      for (const id of new Set(input.groupIds)) {
        const members = perRow.filter((_, b) => input.groupIds[b] === id);
        expect(Math.abs(members.reduce((a, b) => a + b, 0))).toBeLessThan(1e-4);
      }
    }
  });

  it('the RLOO baseline excludes the sample itself: raising one score by Δ raises its advantage by exactly Δ', () => {
    const base = computeAdvantages({ ...fixture, options: { name: 'rloo' } }).advantages;
    const bumped = rewards.slice();
    bumped[4] += 2; // row 0's terminal reward
    const after = computeAdvantages({ ...fixture, rewards: bumped, options: { name: 'rloo' } }).advantages;
    expect(after[0] - base[0]).toBeCloseTo(2, 6); // own advantage: +Δ (its baseline did not move)
    expect(after[7] - base[7]).toBeCloseTo(-2, 6); // the other member: −Δ/(n−1) with n = 2
    expect(after[14]).toBe(base[14]); // another group: unchanged
  });

  it('GAE with λ = 1, γ = 1 and zero values equals the return (sum of the rewards still to come)', () => {
    const rng = Rng.fromSeed(12);
    for (let trial = 0; trial < 20; trial++) {
      const input = randomBatch(rng, { name: 'gae', gamma: 1, lambda: 1, level: rng.next() < 0.5 ? 'token' : 'turn', whiten: false });
      const out = computeAdvantages({ ...input, values: new Float32Array(input.rewards.length) });
      const seqLen = input.seqLen ?? 1;
      for (let b = 0; b < input.groupIds.length; b++) {
        for (let t = 0; t < seqLen; t++) {
          const i = b * seqLen + t;
          if (input.mask?.[i] !== 1) continue;
          // Token level: the rewards from this token on; turn level: from this turn's first agent token on.
          let from = t;
          if (input.options.name === 'gae' && input.options.level === 'turn') {
            while (from > 0 && (input.mask?.[b * seqLen + from - 1] === 0 || input.turnIds?.[b * seqLen + from - 1] === input.turnIds?.[i])) from--;
            while (input.mask?.[b * seqLen + from] === 0 || input.turnIds?.[b * seqLen + from] !== input.turnIds?.[i]) from++;
          }
          let expected = 0;
          for (let u = from; u < seqLen; u++) expected += input.rewards[b * seqLen + u];
          expect(out.advantages[i]).toBeCloseTo(expected, 4);
          expect(out.returns[i]).toBeCloseTo(expected, 4);
        }
      }
    }
  });

  it('inserting environment tokens between turns changes no agent-token advantage', () => {
    const options = [gaeToken, gaeTurn, { name: 'reinforcePlusPlus', gamma: 0.9 }] as const;
    // Row 0 without its observation tokens: A A A (turns 0, 0, 1).
    for (const o of options) {
      const withEnv = computeAdvantages({ ...fixture, options: o });
      const compact = computeAdvantages({
        rewards: Float32Array.of(0, 0, 1),
        values: Float32Array.of(0.2, 0.4, 0.6),
        turnIds: Int32Array.of(0, 0, 1),
        seqLen: 3,
        groupIds: ['a'],
        options: o.name === 'reinforcePlusPlus' ? { name: 'reinforcePlusPlus', gamma: 0.9 } : { ...o, whiten: false },
      });
      if (o.name === 'reinforcePlusPlus') expectClose(Float32Array.of(withEnv.returns[0], withEnv.returns[1], withEnv.returns[4]), compact.returns);
      else expectClose(Float32Array.of(withEnv.advantages[0], withEnv.advantages[1], withEnv.advantages[4]), compact.advantages);
    }
  });

  it('rejects a reward on a masked token for every estimator, naming the slot', () => {
    const misplaced = rewards.slice();
    misplaced[5] = 1; // row 0, slot 5: padding after the last agent token (AgentGym-RL's placement)
    const all: EstimatorOptions[] = [gaeToken, gaeTurn, { name: 'grpo', normalizeStd: true, epsilon: 1e-6 }, { name: 'rloo' }, { name: 'reinforcePlusPlus', gamma: 1 }, { name: 'reinforce', gamma: 1, baselineMomentum: 0.9 }];
    for (const options of all) {
      expect(() => computeAdvantages({ ...fixture, rewards: misplaced, options })).toThrow(/'rewards\[5\]'.*masked token \(row 0, slot 5\)/);
    }
  });

  it('rejects GAE without values and turn-level GAE without turn ids', () => {
    expect(() => computeAdvantages({ rewards, mask, seqLen: T, groupIds, options: gaeToken })).toThrow(/'values'/);
    expect(() => computeAdvantages({ rewards, mask, seqLen: T, groupIds, values, options: gaeTurn })).toThrow(/'turnIds'/);
  });
});

/** Seeded random multi-turn batch: variable turns and lengths, masked gaps, some all-masked rows. */
function randomBatch<O extends EstimatorOptions>(rng: Rng, options: O, emptyRows = true): AdvantageInput<O> & { mask: Float32Array; seqLen: number } {
  const rows = 1 + rng.int(12);
  const seqLen = 1 + rng.int(16);
  const groups = 1 + rng.int(4);
  const mask = new Float32Array(rows * seqLen);
  const rewards = new Float32Array(rows * seqLen);
  const turnIds = new Int32Array(rows * seqLen).fill(-1);
  const values = Float32Array.from({ length: rows * seqLen }, () => rng.normal());
  for (let b = 0; b < rows; b++) {
    if (emptyRows && rng.next() < 0.1) continue; // an all-masked row
    let turn = 0;
    let last = -1;
    for (let t = 0; t < seqLen; t++) {
      const i = b * seqLen + t;
      if (rng.next() < 0.3 && (emptyRows || t > 0)) {
        if (rng.next() < 0.5) turn++; // an observation between turns
        continue;
      }
      mask[i] = 1;
      turnIds[i] = turn;
      if (rng.next() < 0.2) rewards[i] = -0.01 * rng.next(); // a per-token penalty
      last = i;
    }
    if (last >= 0) rewards[last] += rng.next() < 0.5 ? rng.int(2) : rng.normal();
  }
  const groupIds = Array.from({ length: rows }, () => `g${rng.int(groups)}`);
  return { rewards, mask, seqLen, groupIds, values, turnIds, options };
}

/** Each row's single advantage (the value on its first agent token; 0 for an all-masked row). */
function rowValues(input: AdvantageInput, x: Float32Array): number[] {
  const seqLen = input.seqLen ?? 1;
  return input.groupIds.map((_, b) => {
    for (let t = 0; t < seqLen; t++) if (input.mask?.[b * seqLen + t] === 1) return x[b * seqLen + t];
    return 0;
  });
}

describe('fast estimators equal their plain-loop references on seeded random multi-turn batches', () => {
  const cases: [string, () => EstimatorOptions, (input: AdvantageInput) => AdvantageOutput][] = [
    ['grpo', () => ({ name: 'grpo', normalizeStd: true, epsilon: 1e-6 }), (i) => grpoAdvantagesReference(i as AdvantageInput<never>)],
    ['dr. grpo', () => ({ name: 'grpo', normalizeStd: false, epsilon: 1e-6 }), (i) => grpoAdvantagesReference(i as AdvantageInput<never>)],
    ['rloo', () => ({ name: 'rloo' }), (i) => rlooAdvantagesReference(i as AdvantageInput<never>)],
    ['grpo per turn', () => ({ name: 'grpo', normalizeStd: true, epsilon: 1e-6, credit: 'turn' }), (i) => grpoAdvantagesReference(i as AdvantageInput<never>)],
    ['dr. grpo per turn', () => ({ name: 'grpo', normalizeStd: false, epsilon: 1e-6, credit: 'turn' }), (i) => grpoAdvantagesReference(i as AdvantageInput<never>)],
    ['rloo per turn', () => ({ name: 'rloo', credit: 'turn' }), (i) => rlooAdvantagesReference(i as AdvantageInput<never>)],
    ['reinforce++', () => ({ name: 'reinforcePlusPlus', gamma: 0.95 }), (i) => reinforcePlusPlusReference(i as AdvantageInput<never>)],
    ['reinforce', () => ({ name: 'reinforce', gamma: 0.95, baselineMomentum: 0.8 }), (i) => reinforceReference(i as AdvantageInput<never>)],
    ['gae token', () => ({ name: 'gae', gamma: 0.95, lambda: 0.9, level: 'token', whiten: true }), (i) => gaeReference(i as AdvantageInput<never>)],
    ['gae turn', () => ({ name: 'gae', gamma: 0.95, lambda: 0.9, level: 'turn', whiten: false }), (i) => gaeReference(i as AdvantageInput<never>)],
  ];
  for (const [label, options, reference] of cases) {
    it(label, () => {
      const rng = Rng.fromSeed(label.length * 31);
      for (let trial = 0; trial < 40; trial++) {
        const input = randomBatch(rng, options());
        const state = trial % 2 === 1 ? { runningBaseline: rng.normal(), batches: 3 } : undefined;
        const withState = state ? { ...input, state } : input;
        const fast = advantageEstimators[input.options.name](withState as never);
        const slow = reference(withState);
        expectClose(fast.advantages, slow.advantages, 4);
        expectClose(fast.returns, slow.returns, 4);
        expect(fast.state?.runningBaseline ?? 0).toBeCloseTo(slow.state?.runningBaseline ?? 0, 5);
      }
    });
  }
});
