import { describe, expect, it } from 'vitest';
import { EnvironmentError } from '../../../src/core/errors.js';
import { BabyAIEnvironment } from '../../../src/envs/babyai/env.js';
import { MULTIPLE_ACTIONS_MESSAGE } from '../../../src/envs/parse-action.js';

const GO_TO_RED_BALL = 1;
const NO_DISTS = 2;
const OPEN_RED_DOOR = 12;

describe('BabyAIEnvironment', () => {
  it('shows the goal line only in the first observation', () => {
    const env = new BabyAIEnvironment();
    const first = env.reset(GO_TO_RED_BALL);
    expect(first.text).toMatch(/^Your goal: go to (the|a) red ball\n/);
    expect(first.text).toMatch(/\nAvailable actions: \[.*"check available actions"\]$/);
    const next = env.step('turn left');
    expect(next.observation.text).not.toContain('Your goal');
  });

  it('carries the action list in availableActions, matching the text', () => {
    const env = new BabyAIEnvironment();
    const obs = env.reset(GO_TO_RED_BALL);
    expect(obs.availableActions?.slice(0, 2)).toEqual(['turn left', 'turn right']);
    expect(obs.text.endsWith(`[${(obs.availableActions ?? []).map((a) => `"${a}"`).join(', ')}]`)).toBe(true);
  });

  it('answers an unknown action with an error observation flagged invalid', () => {
    const env = new BabyAIEnvironment();
    env.reset(GO_TO_RED_BALL);
    const r = env.step('Thought: hmm\nAction: fly to the moon');
    expect(r.observation.text).toMatch(/not recognized/);
    expect(r).toMatchObject({ reward: 0, done: false, success: false, info: { invalid: true, error: 'unrecognized' } });
  });

  it('answers two Action lines with AgentGym\'s error', () => {
    const env = new BabyAIEnvironment();
    env.reset(GO_TO_RED_BALL);
    const r = env.step('Action: turn left\nAction: turn right');
    expect(r.observation.text.startsWith(MULTIPLE_ACTIONS_MESSAGE)).toBe(true);
    expect(r.info?.invalid).toBe(true);
  });

  it('answers a blocked move with the barrier error', () => {
    const env = new BabyAIEnvironment();
    env.reset(OPEN_RED_DOOR);
    let last = env.step('move forward');
    for (let i = 0; i < 4 && last.info?.invalid !== true; i++) last = env.step('move forward');
    expect(last.observation.text).toMatch(/barrier in front of you/);
    expect(last.info).toMatchObject({ invalid: true, error: 'not-executable' });
  });

  it('lists the actions on "check available actions" without taking a primitive step', () => {
    const env = new BabyAIEnvironment();
    env.reset(GO_TO_RED_BALL);
    const r = env.step('check available actions');
    expect(r.observation.text).toMatch(/^You can take the following actions: turn left, turn right/);
    expect(r.info?.invalid).toBe(false);
    expect(env.step('turn left').info?.stepCount).toBe(1);
  });

  it('solves OpenRedDoor with one high-level action and pays MiniGrid\'s reward', () => {
    const env = new BabyAIEnvironment();
    let obs = env.reset(OPEN_RED_DOOR);
    for (let t = 0; t < 4 && !(obs.availableActions ?? []).includes('toggle and go through red closed door 1'); t++) {
      obs = env.step('turn left').observation;
    }
    const r = env.step('Action: toggle and go through red closed door 1');
    expect(r.done).toBe(true);
    expect(r.success).toBe(true);
    const steps = Number(r.info?.stepCount);
    expect(r.reward).toBeCloseTo(1 - (0.9 * steps) / 50, 10);
    expect(r.observation.text).toContain('The task is completed.');
  });

  it('accepts "pick up" as spelled in the prompt', () => {
    const env = new BabyAIEnvironment();
    // The first GoToRedBallNoDists seed whose start shows the ball.
    let pickup: string | undefined;
    for (let seed = 0; pickup === undefined && seed < 40; seed++) {
      pickup = (env.reset(NO_DISTS + 40 * seed).availableActions ?? []).find((a) => a.startsWith('pickup '));
    }
    if (pickup === undefined) throw new Error('no GoToRedBallNoDists seed in 0..39 shows the ball');
    const r = env.step(pickup.replace('pickup', 'pick up'));
    expect(r.info?.invalid).toBe(false);
  });

  it('ends the episode unsuccessfully when the primitive step budget is used up', () => {
    const env = new BabyAIEnvironment();
    env.reset(NO_DISTS);
    let r = env.step('turn left');
    let turns = 1;
    while (!r.done && turns < 100) {
      r = env.step('turn left');
      turns++;
    }
    expect(turns).toBe(64); // 8x8 room: 1 navigation x 64
    expect(r).toMatchObject({ done: true, success: false, reward: 0, info: { truncated: true } });
  });

  it('throws EnvironmentError when stepped before reset or after close', () => {
    const env = new BabyAIEnvironment();
    expect(() => env.step('turn left')).toThrow(EnvironmentError);
    env.reset(GO_TO_RED_BALL);
    env.close();
    expect(() => env.step('turn left')).toThrow(/after close/);
  });

  it('rejects a negative or fractional task index', () => {
    const env = new BabyAIEnvironment();
    expect(() => env.reset(-1)).toThrow(EnvironmentError);
    expect(() => env.reset(1.5)).toThrow(EnvironmentError);
  });

  it('renders the true map with the agent and mission', () => {
    const env = new BabyAIEnvironment();
    env.reset(GO_TO_RED_BALL);
    const map = env.render();
    expect(map).toMatch(/^mission: go to (the|a) red ball/);
    expect(map).toMatch(/AR/);
    expect(map).toMatch(/>>|VV|<<|\^\^/);
  });
});
