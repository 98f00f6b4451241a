/**
 * turnwise's BabyAI with `textProfile: agentgym` answers what AgentGym's own BabyAI server answered
 * for all 800 recorded episodes (fixtures/agentgym-babyai): every world, pose and mission comes
 * from Minigrid's generator draw for draw, every observation, reward, score and done flag is the
 * server's, byte for byte.
 */
import { describe, expect, it } from 'vitest';
import { BabyAIEnvironment } from '../../../src/envs/babyai/env.js';
import { BABYAI_LEVELS } from '../../../src/envs/babyai/levels/index.js';
import { type Body, firstDifference, GOTOOBJS6_ERROR, loadTranscripts } from './agentgym-transcripts.js';

const transcripts = loadTranscripts();

/** Replays one recorded episode's actions; returns turnwise's reset and step bodies. */
function replay(env: BabyAIEnvironment, dataIdx: number, actions: readonly string[]): { reset: Body; steps: Body[] } {
  const first = env.reset(dataIdx);
  const reset = { observation: first.text, reward: 0, score: 0, deleted: false, done: false };
  let score = 0;
  const steps = actions.map((action) => {
    const r = env.step(action);
    score += r.reward;
    return { observation: r.observation.text, reward: r.reward, score, done: r.done };
  });
  return { reset, steps };
}

describe('BabyAI agentgym profile against AgentGym server transcripts', () => {
  const env = new BabyAIEnvironment({ settings: { textProfile: 'agentgym' } });
  const playable = transcripts.filter((t) => !('error' in t.reset));

  it('holds all 800 recorded episodes: 40 levels x seeds 0..19, 8,406 steps', () => {
    expect(transcripts).toHaveLength(800);
    expect(transcripts.map((t) => t.data_idx)).toEqual(Array.from({ length: 800 }, (_, i) => i));
    expect(transcripts.reduce((n, t) => n + t.steps.length, 0)).toBe(8406);
  });

  it('gives every reset and step body of all 780 playable episodes identically (every level but GoToObjS6)', () => {
    const differences = playable.map((t) => {
      const got = replay(env, t.data_idx, t.steps.map((s) => s.action));
      return firstDifference(t, got.reset, got.steps);
    });
    const identical = differences.filter((d) => d === null).length;
    expect(differences.filter((d) => d !== null).slice(0, 3)).toEqual([]);
    expect(identical).toBe(780);
  });

  it('covers every level but GoToObjS6 with 20 seeds, including episodes Minigrid ended without AgentGym reporting done', () => {
    const levels = new Set(playable.map((t) => t.data_idx % 40));
    expect(levels.size).toBe(39);
    const endedNotDone = playable.filter((t) => t.steps.some((s) => String(s.response.observation).includes('\n The task is completed.') && s.response.done === false));
    expect(endedNotDone.length).toBeGreaterThan(20);
  });

  it("plays GoToObjS6 (data_idx % 40 == 3), which AgentGym's server cannot reset, as Minigrid's GoToObjS6-v1", () => {
    const s6 = transcripts.filter((t) => 'error' in t.reset);
    expect(s6.map((t) => t.data_idx % 40)).toEqual(Array(20).fill(3));
    expect(new Set(s6.map((t) => t.reset.error))).toEqual(new Set([GOTOOBJS6_ERROR]));
    expect(BABYAI_LEVELS[3]?.gymId).toBe('BabyAI-GoToObjS6-v0');
    const turnwise = new BabyAIEnvironment({ settings: { generator: 'minigrid' } });
    for (const t of s6) {
      const obs = env.reset(t.data_idx);
      expect(obs.text).toMatch(/^Your goal: go to the (red|green|blue|purple|yellow|grey) (ball|box|key)\n/);
      expect(obs.text).toMatch(/You are not carrying anything\.\nAvailable actions: \["turn left", "turn right"/);
      // One 6x6 room (v1's size) holding exactly the named object; the same world as the turnwise text's.
      turnwise.reset(t.data_idx);
      const world = turnwise.trueState()?.world;
      expect([world?.grid.width, world?.grid.height]).toEqual([6, 6]);
      expect(world?.grid.cells.filter((c) => c !== null && c.type !== 'wall')).toHaveLength(1);
      expect(turnwise.goal()).toBe(env.goal());
    }
  });

  it("answers like AgentGym's server to an empty, an unknown and an impossible action, and lists actions for any text with 'check'", () => {
    const t = transcripts[1];
    if (t === undefined) throw new Error('no transcript');
    const obs = env.reset(t.data_idx);
    const list = obs.text.slice(obs.text.lastIndexOf('\nAvailable actions: '));
    expect(env.step('').observation.text).toBe(`No change in state.${list}`);
    expect(env.step('jump').observation.text).toBe(`The action is not recognized. Please check valid actions.${list}`);
    expect(env.step('drop').observation.text).toBe(`You cannot drop the object, as you are not carrying anything.${list}`);
    expect(env.step('  CHECK please ').observation.text).toMatch(/^You can take the following actions: turn left, turn right, /);
    // A reply in Thought/Action form has its action extracted as AgentGym's client does.
    const next = env.step('Thought:\nlook\n\nAction:\nturn left');
    expect(next.info?.invalid).toBe(false);
    expect(next.observation.text).toMatch(/^In front of you|^You cannot see/);
  });
});
