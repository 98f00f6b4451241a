import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/core/errors.js';
import type { DecodeConstraint, Trajectory, Turn } from '../../src/core/types.js';
import { packTrajectories } from '../../src/learner/pack.js';

interface TurnSpec {
  prompt: number[];
  action: number[];
  logprobs?: number[];
  mask?: number[];
  constraint?: DecodeConstraint | null;
  version?: number;
}

function turn(spec: TurnSpec, index: number): Turn {
  return {
    index,
    observationText: '',
    promptTokens: Int32Array.from(spec.prompt),
    actionText: '',
    actionTokens: Int32Array.from(spec.action),
    actionLogprobs: Float32Array.from(spec.logprobs ?? spec.action.map((_, j) => -0.1 * (j + 1))),
    actionLossMask: Uint8Array.from(spec.mask ?? spec.action.map(() => 1)),
    constraint: spec.constraint ?? null,
    policyVersion: spec.version ?? 0,
    reward: 0,
    invalidAction: false,
  };
}

function trajectory(id: string, turns: TurnSpec[]): Trajectory {
  return {
    trajectoryId: id,
    taskId: 'babyai_0',
    groupId: 'g',
    step: 0,
    turns: turns.map(turn),
    reward: 0,
    outcome: 'failure',
    horizon: 5,
    finalObservationText: '',
  };
}

const big = { maxTokensPerBatch: 1000 };

describe('packTrajectories', () => {
  it('makes one sequence per turn when prompts do not carry the history', () => {
    const t = trajectory('t0', [
      { prompt: [1, 2, 3], action: [4, 5], logprobs: [-0.5, -0.25], version: 3 },
      { prompt: [6, 7], action: [8], logprobs: [-2], version: 4 },
    ]);
    const [packed, ...rest] = packTrajectories([t], Float32Array.of(0.75), big);
    expect(rest).toHaveLength(0);
    const { batch, signal } = packed;
    expect(batch.batchSize).toBe(2);
    expect(batch.seqLen).toBe(5);
    // Longest first; right padding with 0.
    expect(Array.from(batch.inputIds)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 0, 0]);
    expect(Array.from(batch.attentionMask)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 0, 0]);
    // Target 4 is predicted at position 2 (token 3), 5 at 3 (token 4), 8 at row 1 position 1 → 5 + 1.
    expect(Array.from(batch.targetPositions)).toEqual([2, 3, 6]);
    expect(Array.from(batch.targetIds)).toEqual([4, 5, 8]);
    expect(batch.allowedOffsets).toBeNull();
    expect(batch.allowedIds).toBeNull();
    expect(Array.from(signal.oldLogprobs)).toEqual([-0.5, -0.25, -2]);
    expect(Array.from(signal.advantages)).toEqual([0.75, 0.75, 0.75]);
    expect(Array.from(signal.lossMask)).toEqual([1, 1, 1]);
    expect(Array.from(signal.policyVersions)).toEqual([3, 3, 4]);
    expect(Array.from(signal.trajectoryIndex)).toEqual([0, 0, 0]);
    // Every target position points at the real token just before the target.
    batch.targetPositions.forEach((p, n) => {
      expect(batch.inputIds[p + 1]).toBe(batch.targetIds[n]);
    });
  });

  it('chains full-history turns into one sequence instead of duplicating the prefix', () => {
    const t = trajectory('t0', [
      { prompt: [1, 2, 3], action: [4, 5] },
      { prompt: [1, 2, 3, 4, 5, 6, 7], action: [8, 9] },
      { prompt: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], action: [11] },
    ]);
    const [{ batch, signal }] = packTrajectories([t], Float32Array.of(-1), big);
    expect(batch.batchSize).toBe(1);
    expect(Array.from(batch.inputIds)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(Array.from(batch.targetIds)).toEqual([4, 5, 8, 9, 11]);
    expect(Array.from(batch.targetPositions)).toEqual([2, 3, 6, 7, 9]);
    expect(Array.from(signal.oldLogprobs)).toEqual(Array.from(Float32Array.of(-0.1, -0.2, -0.1, -0.2, -0.1)));
  });

  it('does not chain when the prompt keeps the old prompt but not the action tokens as sampled', () => {
    const t = trajectory('t0', [
      { prompt: [1, 2, 3], action: [4, 5] },
      { prompt: [1, 2, 3, 4, 6, 7], action: [8] }, // action re-tokenized differently: 4 6 ≠ 4 5
    ]);
    const [{ batch }] = packTrajectories([t], Float32Array.of(1), big);
    expect(batch.batchSize).toBe(2);
    expect(Array.from(batch.inputIds)).toEqual([1, 2, 3, 4, 6, 7, 8, 1, 2, 3, 4, 5, 0, 0]);
  });

  it('cuts length-sorted sequences into micro-batches of at most maxTokensPerBatch padded tokens', () => {
    const a = trajectory('a', [{ prompt: [1, 2], action: [3] }]); // length 3
    const b = trajectory('b', [{ prompt: [1, 2, 3, 4], action: [5] }]); // length 5
    const c = trajectory('c', [{ prompt: [7, 8], action: [9] }]); // length 3
    const packed = packTrajectories([a, b, c], Float32Array.of(1, 2, 3), { maxTokensPerBatch: 6 });
    // 5-long alone (2 × 5 > 6), then both 3-long ones (2 × 3 = 6), in input order on ties.
    expect(packed.map((p) => [p.batch.batchSize, p.batch.seqLen])).toEqual([
      [1, 5],
      [2, 3],
    ]);
    expect(Array.from(packed[1].batch.inputIds)).toEqual([1, 2, 3, 7, 8, 9]);
    expect(Array.from(packed[1].signal.advantages)).toEqual([1, 3]);
    expect(Array.from(packed[1].signal.trajectoryIndex)).toEqual([0, 2]);
    for (const p of packed) expect(p.batch.batchSize * p.batch.seqLen).toBeLessThanOrEqual(6);
  });

  it('gives a sequence longer than the cap a micro-batch of its own', () => {
    const long = trajectory('long', [{ prompt: [1, 2, 3, 4, 5, 6, 7], action: [8] }]);
    const short = trajectory('short', [{ prompt: [1], action: [2] }]);
    const packed = packTrajectories([short, long], Float32Array.of(1, 1), { maxTokensPerBatch: 4 });
    expect(packed.map((p) => [p.batch.batchSize, p.batch.seqLen])).toEqual([
      [1, 8],
      [1, 2],
    ]);
  });

  it('cuts into a multiple of microBatchMultiple micro-batches of equal work, every target kept once', () => {
    // Eight one-turn trajectories, prompts of 9, 9, 7, 7, 5, 5, 3, 3 tokens plus one action token.
    const lengths = [9, 9, 7, 7, 5, 5, 3, 3];
    const trajectories = lengths.map((n, i) => trajectory(`t${i}`, [{ prompt: Array.from({ length: n }, (_, j) => j + 1), action: [40 + i] }]));
    const advantages = Float32Array.from(lengths, (_, i) => i + 1);
    expect(packTrajectories(trajectories, advantages, big)).toHaveLength(1); // all 8 fit 1000 tokens
    const packed = packTrajectories(trajectories, advantages, { ...big, microBatchMultiple: 2 });
    // Two micro-batches of 4·10 = 40 and 4·6 = 24 padded tokens (a cut after 2 rows would leave 6·8 = 48).
    expect(packed.map((p) => [p.batch.batchSize, p.batch.seqLen])).toEqual([
      [4, 10],
      [4, 6],
    ]);
    const targets = packed.flatMap((p) => Array.from(p.batch.targetIds)).sort((a, b) => a - b);
    expect(targets).toEqual([40, 41, 42, 43, 44, 45, 46, 47]);
    const trained = packed.flatMap((p) => Array.from(p.signal.advantages)).sort((a, b) => a - b);
    expect(trained).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('copies constraint CSR per target, with empty ranges for unconstrained targets', () => {
    const constrained = trajectory('c', [
      {
        prompt: [1, 2],
        action: [4, 5],
        mask: [1, 0],
        // position 0 allowed {4, 9}; position 1 forced to {5}
        constraint: { allowedOffsets: Int32Array.of(0, 2, 3), allowedIds: Int32Array.of(4, 9, 5) },
      },
    ]);
    const free = trajectory('f', [{ prompt: [1], action: [3] }]);
    const [{ batch, signal }] = packTrajectories([constrained, free], Float32Array.of(1, 1), big);
    expect(Array.from(batch.targetIds)).toEqual([4, 5, 3]);
    expect(Array.from(batch.allowedOffsets ?? [])).toEqual([0, 2, 3, 3]);
    expect(Array.from(batch.allowedIds ?? [])).toEqual([4, 9, 5]);
    expect(Array.from(signal.lossMask)).toEqual([1, 0, 1]);
  });

  it('leaves out sequences whose every action token was forced', () => {
    const t = trajectory('t', [
      { prompt: [1], action: [2, 3], mask: [0, 0] },
      { prompt: [4], action: [5] },
    ]);
    const [{ batch }] = packTrajectories([t], Float32Array.of(1), big);
    expect(Array.from(batch.inputIds)).toEqual([4, 5]);
  });

  it('drops zero-advantage trajectories only when told', () => {
    const t0 = trajectory('t0', [{ prompt: [1], action: [2] }]);
    const t1 = trajectory('t1', [{ prompt: [3], action: [4] }]);
    const adv = Float32Array.of(0, 0.5);
    expect(packTrajectories([t0, t1], adv, big)[0].batch.batchSize).toBe(2);
    const [{ batch, signal }] = packTrajectories([t0, t1], adv, { ...big, dropZeroAdvantage: true });
    expect(Array.from(batch.inputIds)).toEqual([3, 4]);
    expect(Array.from(signal.trajectoryIndex)).toEqual([1]);
    expect(packTrajectories([t0], Float32Array.of(0), { ...big, dropZeroAdvantage: true })).toEqual([]);
  });

  it('rejects per-token arrays of different lengths, naming the trajectory and turn', () => {
    const bad = trajectory('traj-7', [
      { prompt: [1], action: [2] },
      { prompt: [1], action: [2, 3], logprobs: [-1] },
    ]);
    expect(() => packTrajectories([bad], Float32Array.of(1), big)).toThrow(InvalidArgumentError);
    expect(() => packTrajectories([bad], Float32Array.of(1), big)).toThrow(/trajectories\[0\]\.turns\[1\]\.actionLogprobs.*traj-7.*turn 1/);
    const badMask = trajectory('traj-8', [{ prompt: [1], action: [2, 3], mask: [1] }]);
    expect(() => packTrajectories([badMask], Float32Array.of(1), big)).toThrow(/turns\[0\]\.actionLossMask.*traj-8/);
    const badCsr = trajectory('traj-9', [
      { prompt: [1], action: [2, 3], constraint: { allowedOffsets: Int32Array.of(0, 1), allowedIds: Int32Array.of(2) } },
    ]);
    expect(() => packTrajectories([badCsr], Float32Array.of(1), big)).toThrow(/constraint\.allowedOffsets.*traj-9/);
  });

  it('rejects bad options and advantages, naming the field', () => {
    const t = trajectory('t', [{ prompt: [1], action: [2] }]);
    expect(() => packTrajectories([t], Float32Array.of(1), { maxTokensPerBatch: 0 })).toThrow(/'maxTokensPerBatch'/);
    expect(() => packTrajectories([t], Float32Array.of(1), { ...big, microBatchMultiple: 1.5 })).toThrow(/'microBatchMultiple'/);
    expect(() => packTrajectories([t], Float32Array.of(1), { ...big, attentionBreakEven: 0 })).toThrow(/'attentionBreakEven'/);
    expect(() => packTrajectories([t], Float32Array.of(1, 2), big)).toThrow(/'advantagesPerTrajectory'/);
    expect(() => packTrajectories([t], Float32Array.of(Number.NaN), big)).toThrow(/'advantagesPerTrajectory\[0\]'/);
    const noPrompt = trajectory('np', [{ prompt: [], action: [2] }]);
    expect(() => packTrajectories([noPrompt], Float32Array.of(1), big)).toThrow(/promptTokens/);
  });
});
