import { describe, expect, it } from 'vitest';
import { parseSimulateFlags } from '../../src/cli/simulate-command.js';
import { systemClock } from '../../src/core/clock.js';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import type { Observation } from '../../src/core/types.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { babyaiScriptedAction } from '../../src/runtime/simulate/sim-policies.js';
import { simulate } from '../../src/runtime/simulate/simulate.js';

const config = resolveConfig(parseConfig({ seed: 3, env: { name: 'babyai', settings: { levels: ['GoToRedBallGrey'] } }, horizon: { schedule: 'fixed', horizon: 6 } }));

describe('turnwise simulate (in-process)', () => {
  it('plays 200 concurrent episodes to the turn budget and cuts the ones in flight; turns, episodes and outcomes add up', async () => {
    const report = await simulate({ config, spec: getEnvironmentSpec('babyai'), agents: 200, policy: { kind: 'random' }, budget: { turns: 600 }, clock: systemClock });
    const o = report.outcomes;
    expect(o.success + o.failure + o.truncated + o.error).toBe(report.episodes);
    expect(o.error).toBe(0);
    // The budget, plus at most the rest of the wave of answers that reached it (one turn per
    // agent): the episodes in flight are cut there, not played to their end (which used to
    // add up to 200 × 6 turns of wind-down).
    expect(report.turns).toBeGreaterThanOrEqual(600);
    expect(report.turns).toBeLessThan(600 + 200);
    expect(report.cutAtBudget).toBeGreaterThan(0);
    expect(report.cutAtBudget).toBeLessThanOrEqual(200);
    // Every finished episode took 1..horizon turns; cut ones took 0..horizon - 1.
    expect(report.turns).toBeGreaterThanOrEqual(report.episodes);
    expect(report.turns).toBeLessThanOrEqual((report.episodes + report.cutAtBudget) * 6);
    expect(report.turnsPerSecond).toBeCloseTo(report.turns / report.seconds, 6);
    expect(report.memory.perEpisodeBytes).toBeCloseTo((report.memory.peakBytes - report.memory.baselineBytes) / 200, 6);
    expect(report.eventLoopLagMs.max).toBeGreaterThanOrEqual(report.eventLoopLagMs.p50);
    expect(report.envPlacement).toBe('in-process');
    expect(report.cpuMicrosPerTurn.process).toBeGreaterThan(0);
    // Linux reads the main thread's own counter; elsewhere the figure is absent.
    if (process.platform === 'linux') expect(report.cpuMicrosPerTurn.mainThread).toBeGreaterThan(0);
  });

  it('stops at a time budget, cutting the episodes in flight', async () => {
    const report = await simulate({ config, spec: getEnvironmentSpec('babyai'), agents: 100, policy: { kind: 'random' }, budget: { seconds: 0.5 }, clock: systemClock });
    expect(report.seconds).toBeGreaterThanOrEqual(0.5);
    expect(report.cutAtBudget).toBeGreaterThan(0);
    expect(report.turns).toBeLessThanOrEqual((report.episodes + report.cutAtBudget) * 6);
  });

  it('the scripted BabyAI policy (the oracle) solves the easy level where random play mostly times out', async () => {
    const run = (kind: 'scripted' | 'random') =>
      simulate({ config, spec: getEnvironmentSpec('babyai'), agents: 50, policy: { kind }, budget: { turns: 300 }, clock: systemClock });
    const [scripted, random] = [await run('scripted'), await run('random')];
    expect(scripted.outcomes.success / scripted.episodes).toBeGreaterThan(0.9);
    expect(random.outcomes.success / random.episodes).toBeLessThan(scripted.outcomes.success / scripted.episodes);
  });

  it('the stateless oracle searches three turns left, then moves forward', () => {
    const observation: Observation = { text: 'Your goal: go to the red ball\nnothing here', availableActions: ['turn left', 'turn right', 'move forward'] };
    const turns = (n: number) => Array.from({ length: n }, () => ({ observationText: observation.text, actionText: 'turn left' }));
    expect([0, 1, 2, 3, 4].map((n) => babyaiScriptedAction({ turns: turns(n) as never, observation }))).toEqual(['turn left', 'turn left', 'turn left', 'move forward', 'turn left']);
    const seen: Observation = { ...observation, availableActions: ['turn left', 'go to red ball 1'] };
    expect(babyaiScriptedAction({ turns: [], observation: seen })).toBe('go to red ball 1');
  });
});

describe('turnwise simulate --policy random on free action modes, held-out split', () => {
  it('plays exactly --episodes held-out tasks with random valid-looking actions: free Wordle almost never wins, listed Wordle nearly always does', async () => {
    const wordle = (settings: Record<string, unknown>) => resolveConfig(parseConfig({ seed: 1, env: { name: 'wordle', settings }, horizon: { schedule: 'fixed', horizon: 8 } }));
    const run = (settings: Record<string, unknown>) =>
      simulate({ config: wordle(settings), spec: getEnvironmentSpec('wordle'), agents: 8, policy: { kind: 'random' }, budget: { episodes: 140 }, split: 'test', clock: systemClock });
    const [free, listed] = [await run({ candidates: 0 }), await run({ candidates: 20 })];
    expect(free.episodes).toBe(140);
    expect(free.policy).toMatch(/random text actions/);
    // Random vocabulary words are valid guesses: games end by running out of guesses, not turns.
    expect(free.outcomes.failure + free.outcomes.success).toBe(140);
    expect(free.outcomes.success).toBeLessThanOrEqual(2);
    expect(listed.outcomes.success).toBeGreaterThan(120);
    const calls = await simulate({ config: wordle({ candidates: 0 }), spec: getEnvironmentSpec('wordle'), agents: 4, policy: { kind: 'random', form: 'tools' }, budget: { episodes: 20 }, split: 'test', clock: systemClock });
    expect(calls.policy).toMatch(/random tool calls/);
    expect(calls.outcomes.failure + calls.outcomes.success).toBe(20); // valid guess calls: games end by guesses, not turns
    expect(parseSimulateFlags({ agents: '1', policy: 'random:tools' }).policy).toEqual({ kind: 'random', form: 'tools' });
  });
});

describe('simulate flags', () => {
  it('parses agents, policy and budget', () => {
    expect(parseSimulateFlags({ agents: '200', policy: 'checkpoint:runs/x', seconds: '2.5', envWorkers: '2' })).toEqual({
      agents: 200,
      policy: { kind: 'checkpoint', location: 'runs/x' },
      budget: { seconds: 2.5 },
      envWorkers: 2,
    });
    expect(parseSimulateFlags({ agents: '3' }).budget).toEqual({ turns: 30 });
    expect(parseSimulateFlags({ agents: '3', episodes: '140', split: 'test' })).toMatchObject({ budget: { episodes: 140 }, split: 'test' });
  });

  it.each([
    [{}, '--agents'],
    [{ agents: '0' }, '--agents'],
    [{ agents: '1.5' }, '--agents'],
    [{ agents: 'x' }, '--agents'],
    [{ agents: '2', policy: 'greedy' }, '--policy'],
    [{ agents: '2', policy: 'checkpoint:' }, '--policy'],
    [{ agents: '2', turns: '0' }, '--turns'],
    [{ agents: '2', turns: '5', seconds: '1' }, '--turns'],
    [{ agents: '2', seconds: '-1' }, '--seconds'],
    [{ agents: '2', envWorkers: '-1' }, '--env-workers'],
    [{ agents: '2', horizon: '0' }, '--horizon'],
    [{ agents: '2', episodes: '0' }, '--episodes'],
    [{ agents: '2', turns: '5', episodes: '3' }, '--turns'],
  ])('rejects %o naming %s', (flags, flag) => {
    expect(() => parseSimulateFlags(flags)).toThrow(`invalid '${flag}'`);
  });
});
