import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerRewardShaper, rewardShaperRegistry, rewardShapingOf, shapeTrajectory } from '../../src/algorithms/reward-shapers.js';
import { InvalidConfigError } from '../../src/core/errors.js';
import type { Trajectory } from '../../src/core/types.js';
import { plainTurn } from '../helpers/turns.js';

const turn = plainTurn;
const episode: Trajectory = {
  trajectoryId: 't1',
  taskId: 'babyai_3',
  groupId: 'g',
  step: 2,
  turns: [turn(0, 'turn left'), turn(1, 'Turn left '), turn(2, 'fly', true), turn(3, 'move forward')],
  reward: 0,
  outcome: 'truncated',
  horizon: 4,
  finalObservationText: '',
};

describe('reward shapers (process-reward hooks)', () => {
  it('calls the hook once per turn, in order, with the turn and the turns before it, and keeps the input unchanged', async () => {
    const seen: [number, number[], string][] = [];
    const shaped = await shapeTrajectory(episode, {
      name: 'probe',
      hook: ({ turn, previousTurns, taskId }) => {
        seen.push([turn.index, previousTurns.map((t) => t.index), taskId]);
        return -turn.index;
      },
    });
    expect(seen).toEqual([
      [0, [], 'babyai_3'],
      [1, [0], 'babyai_3'],
      [2, [0, 1], 'babyai_3'],
      [3, [0, 1, 2], 'babyai_3'],
    ]);
    expect(shaped.turns.map((t) => t.shapedReward)).toEqual([-0, -1, -2, -3]);
    expect(episode.turns.every((t) => t.shapedReward === undefined)).toBe(true);
  });

  it('built-ins: invalid-action-penalty, repeated-action-penalty (actions compared trimmed, lower-cased), turn-penalty', async () => {
    const invalid = await shapeTrajectory(episode, rewardShapingOf('invalid-action-penalty', { penalty: 0.5 }));
    expect(invalid.turns.map((t) => t.shapedReward)).toEqual([0, 0, -0.5, 0]);
    const repeated = await shapeTrajectory(episode, rewardShapingOf('repeated-action-penalty', {}));
    expect(repeated.turns.map((t) => t.shapedReward)).toEqual([0, -0.1, 0, 0]);
    const perTurn = await shapeTrajectory(episode, rewardShapingOf('turn-penalty', {}));
    expect(perTurn.turns.map((t) => t.shapedReward)).toEqual([-0.01, -0.01, -0.01, -0.01]);
    expect(rewardShaperRegistry.list().filter((s) => s.builtIn === true).map((s) => s.name)).toEqual(['turn-penalty', 'invalid-action-penalty', 'repeated-action-penalty']);
  });

  it('names the field at fault: an unknown shaper, a bad or unknown setting', () => {
    expect(() => rewardShapingOf('nope', {})).toThrow(/reward\.shaper.*unknown reward shaper 'nope'.*invalid-action-penalty/);
    expect(() => rewardShapingOf('invalid-action-penalty', { penalty: -1 })).toThrow(InvalidConfigError);
    expect(() => rewardShapingOf('invalid-action-penalty', { penalty: -1 })).toThrow(/reward\.settings\.penalty/);
    expect(() => rewardShapingOf('invalid-action-penalty', { penalti: 1 })).toThrow(/reward\.settings.*penalti/);
  });

  it('fails with the shaper, trajectory and turn named when a hook returns a non-finite value or throws', async () => {
    await expect(shapeTrajectory(episode, { name: 'nan', hook: ({ turn }) => (turn.index === 2 ? Number.NaN : 0) })).rejects.toThrow(/'nan' on turn 2 of t1 returned NaN/);
    await expect(
      shapeTrajectory(episode, {
        name: 'boom',
        hook: () => {
          throw new Error('model down');
        },
      }),
    ).rejects.toThrow(/'boom' on turn 0 of t1 failed: model down/);
  });

  it('registers users’ own shapers by unique name', async () => {
    registerRewardShaper({ name: 'stepCost-test', description: 'test', settings: z.object({ cost: z.number().default(0.01) }).strict(), create: ({ cost }) => () => -cost });
    expect(() => registerRewardShaper({ name: 'stepCost-test', description: '', create: () => () => 0 })).toThrow(/already registered/);
    expect(() => registerRewardShaper({ name: 'bad name', description: '', create: () => () => 0 })).toThrow(/letters, digits/);
    const shaped = await shapeTrajectory(episode, rewardShapingOf('stepCost-test', { cost: 0.25 }));
    expect(shaped.turns.map((t) => t.shapedReward)).toEqual([-0.25, -0.25, -0.25, -0.25]);
  });
});
