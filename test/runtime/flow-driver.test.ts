import { describe, expect, it } from 'vitest';
import { type Clock, SimulatedClock, systemClock } from '../../src/core/clock.js';
import type { StepResult, Trajectory } from '../../src/core/types.js';
import '../../src/envs/index.js';
import type { FlowResult } from '../../src/actors/episode-flow.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import type { EnvOp } from '../../src/runtime/env-pool/batch-codec.js';
import { OP } from '../../src/runtime/env-pool/batch-codec.js';
import { type BatchEnv, type EnvAnswer, InProcessBatchEnv } from '../../src/runtime/env-pool/batch-env.js';
import { MemoryBus } from '../../src/bus/memory-bus.js';
import { type EpisodePlan, RolloutRunner } from '../../src/runtime/rollout.js';
import { type FlowBudget, FlowDriver } from '../../src/runtime/simulate/flow-driver.js';
import { babyaiFlowPolicy, cycleFlowPolicy, type FlowPolicy, randomFlowPolicy } from '../../src/runtime/simulate/flow-policies.js';
import { randomPolicy, scriptedPolicy } from '../../src/runtime/simulate/sim-policies.js';

const settings = { levels: ['GoToRedBall', 'GoToRedBallGrey', 'GoToObjS6'] };
const spec = getEnvironmentSpec('babyai');
const indices = spec.catalog({ settings }).indices('train');
const plans: EpisodePlan[] = Array.from({ length: 40 }, (_, i) => ({
  taskId: `babyai_${indices[i]}`,
  taskIndex: indices[i] as number,
  groupId: `g${i}`,
  trajectoryId: `t${i}`,
  seed: 1000 + i * 7919,
}));

const view = (t: Trajectory) => ({
  id: t.trajectoryId,
  outcome: t.outcome,
  reward: t.reward,
  final: t.finalObservationText,
  error: t.error,
  turns: t.turns.map((turn) => [turn.index, turn.observationText, turn.actionText, turn.reward, turn.invalidAction]),
});

async function viaEpisodeActors(kind: 'random' | 'scripted', horizon: number): Promise<Trajectory[]> {
  const bus = new MemoryBus({ clock: systemClock });
  const runner = new RolloutRunner({
    bus,
    runId: 'flow-compare',
    spec,
    envSettings: settings,
    poolSize: 12,
    constrained: false,
    envTimeoutMs: 30_000,
    actTimeoutMs: 30_000,
    clock: systemClock,
    textPolicy: kind === 'random' ? randomPolicy() : scriptedPolicy('babyai'),
  });
  const trajectories = await runner.run(0, horizon, plans);
  await runner.close();
  await bus.close();
  return trajectories;
}

interface FlowRun {
  results: FlowResult[];
  driver: FlowDriver;
}

async function viaFlow(
  env: BatchEnv,
  policy: FlowPolicy,
  options: { horizon: number; lanes?: number; clock?: Clock; maxBatch?: number; maxInFlight?: number; plans?: readonly EpisodePlan[]; signal?: AbortSignal; envTimeoutMs?: number; budget?: FlowBudget },
): Promise<FlowRun> {
  const driver = new FlowDriver({
    env,
    policy,
    envName: 'babyai',
    lanes: options.lanes ?? 12,
    step: 0,
    horizon: options.horizon,
    envTimeoutMs: options.envTimeoutMs ?? 30_000,
    clock: options.clock ?? systemClock,
    recordTurns: true,
    ...(options.maxBatch !== undefined ? { maxBatch: options.maxBatch } : {}),
    ...(options.maxInFlight !== undefined ? { maxInFlight: options.maxInFlight } : {}),
  });
  const list = options.plans ?? plans;
  const results: FlowResult[] = new Array(list.length);
  await driver.run(
    (i) => list[i] ?? null,
    (i, r) => {
      results[i] = r;
    },
    options.signal,
    options.budget,
  );
  await env.close();
  return { results, driver };
}

/** A scripted stand-in environment: each step answers `reward 0.5, not done` unless `script` says otherwise. */
class StubEnv implements BatchEnv {
  readonly description = 'stub';
  readonly shards = 1;
  readonly ops: EnvOp[] = [];
  private readonly onOps: ((ops: readonly EnvOp[]) => void)[] = [];

  constructor(private readonly script: (op: EnvOp, stepOfSlot: number) => EnvAnswer | 'hang' = () => ({ observation: { text: 'o', availableActions: ['a', 'b'] }, reward: 0.5, done: false })) {}

  private readonly steps = new Map<number, number>();

  shardOf(): number {
    return 0;
  }

  /** Resolves once a batch containing an op that matches arrives. */
  seen(match: (op: EnvOp) => boolean): Promise<void> {
    return new Promise((resolve) => this.onOps.push((ops) => ops.some(match) && resolve()));
  }

  run(_shard: number, ops: readonly EnvOp[]): Promise<readonly EnvAnswer[]> {
    this.ops.push(...ops);
    for (const listener of this.onOps) listener(ops);
    const answers: EnvAnswer[] = [];
    for (const op of ops) {
      if (op.kind === OP.reset) this.steps.set(op.slot, 0);
      const n = op.kind === OP.step ? (this.steps.get(op.slot) ?? 0) + 1 : 0;
      if (op.kind === OP.step) this.steps.set(op.slot, n);
      const answer = op.kind === OP.close ? { observation: { text: '' }, reward: 0, done: false } : this.script(op, n);
      if (answer === 'hang') return new Promise(() => {});
      answers.push(op.kind === OP.reset && !(answer instanceof Error) ? { observation: { text: `start ${op.taskIndex}`, availableActions: ['a', 'b'] }, reward: 0, done: false } : answer);
    }
    return Promise.resolve(answers);
  }

  async close(): Promise<void> {}
}

const stubPlans = (n: number): EpisodePlan[] => Array.from({ length: n }, (_, i) => ({ taskId: `babyai_${i}`, taskIndex: i, groupId: 'g', trajectoryId: `s${i}`, seed: i }));

describe('flow episodes (episode-flow actors + batched driver)', () => {
  it('give the same trajectories as the training path’s episode actors, for the random and the scripted policy', async () => {
    for (const kind of ['random', 'scripted'] as const) {
      const reference = await viaEpisodeActors(kind, 8);
      const policy = kind === 'random' ? randomFlowPolicy() : babyaiFlowPolicy();
      const { results } = await viaFlow(new InProcessBatchEnv(spec, settings), policy, { horizon: 8 });
      expect(reference.every((t) => t.outcome !== 'error')).toBe(true);
      expect(results.map((r) => view(r.trajectory))).toEqual(reference.map(view));
      expect(results.map((r) => r.turnCount)).toEqual(reference.map((t) => t.turns.length));
    }
    // The comparison covers many steps and every outcome the horizon allows.
    const random = await viaEpisodeActors('random', 8);
    expect(random.reduce((n, t) => n + t.turns.length, 0)).toBeGreaterThan(100);
    expect(new Set(random.map((t) => t.outcome))).toContain('truncated');
  });

  it('batch size and pipelining do not change trajectories', async () => {
    const wide = await viaFlow(new InProcessBatchEnv(spec, settings), randomFlowPolicy(), { horizon: 8 });
    const narrow = await viaFlow(new InProcessBatchEnv(spec, settings), randomFlowPolicy(), { horizon: 8, lanes: 5, maxBatch: 3, maxInFlight: 1 });
    expect(narrow.results.map((r) => view(r.trajectory))).toEqual(wide.results.map((r) => view(r.trajectory)));
    // 12 lanes: each wave of answers goes out as one batch; 3 ops per batch at most when asked.
    const narrowStats = narrow.driver.stats();
    expect(narrowStats.ops / narrowStats.batches).toBeLessThanOrEqual(3);
    const wideStats = wide.driver.stats();
    expect(wideStats.ops / wideStats.batches).toBeGreaterThan(5);
  });

  it('truncates at the horizon: 3 turns, the last step’s reward, one event per turn recorded in order', async () => {
    const env = new StubEnv((_op, n) => ({ observation: { text: `after ${n}`, availableActions: ['a', 'b'] }, reward: n / 10, done: false }));
    const { results } = await viaFlow(env, cycleFlowPolicy(), { horizon: 3, lanes: 2, plans: stubPlans(3) });
    for (const [i, r] of results.entries()) {
      expect(r.turnCount).toBe(3);
      expect(r.trajectory.outcome).toBe('truncated');
      expect(r.trajectory.reward).toBeCloseTo(0.3, 10);
      expect(r.trajectory.finalObservationText).toBe('after 3');
      // cycle policy: turn k takes actions[k % 2].
      expect(r.trajectory.turns.map((t) => [t.observationText, t.actionText, t.reward])).toEqual([
        [`start ${i}`, 'a', 0.1],
        ['after 1', 'b', 0.2],
        ['after 2', 'a', 0.3],
      ]);
    }
    // 3 resets + 9 steps, no more.
    expect(env.ops.filter((op) => op.kind === OP.reset)).toHaveLength(3);
    expect(env.ops.filter((op) => op.kind === OP.step)).toHaveLength(9);
  });

  it('applies the shared outcome rules: done+success → success, done with reward 0 → failure, done with reward > 0 → success', async () => {
    const verdicts: Record<number, Partial<StepResult>> = { 0: { done: true, success: true, reward: 0 }, 1: { done: true, reward: 0 }, 2: { done: true, reward: 0.7 } };
    const env = new StubEnv((op) => ({ observation: { text: 'end' }, reward: 0, ...verdicts[op.slot % 3], done: true }));
    const { results } = await viaFlow(env, cycleFlowPolicy(), { horizon: 5, lanes: 3, plans: stubPlans(3) });
    expect(results.map((r) => [r.trajectory.outcome, r.turnCount])).toEqual([
      ['success', 1],
      ['failure', 1],
      ['success', 1],
    ]);
  });

  it('an environment error fails only its episode, with the training path’s message, and the lane moves to a fresh instance', async () => {
    const env = new StubEnv((op, n) => (op.slot === 1 && n === 2 ? new Error('boom') : { observation: { text: 'o', availableActions: ['a'] }, reward: 0, done: n === 2 }));
    const { results } = await viaFlow(env, cycleFlowPolicy(), { horizon: 5, lanes: 2, plans: stubPlans(4) });
    expect(results[1]?.trajectory.outcome).toBe('error');
    expect(results[1]?.trajectory.error).toBe("environment 'babyai' failed: step failed: boom");
    expect(results[1]?.turnCount).toBe(1);
    expect(results.filter((r) => r.trajectory.outcome === 'failure')).toHaveLength(3);
    // The broken instance (slot 1) is closed; the lane's next episode resets slot 2 (the first fresh slot).
    expect(env.ops.filter((op) => op.kind === OP.close).map((op) => op.slot)).toEqual([1]);
    expect(env.ops.filter((op) => op.kind === OP.reset).map((op) => op.slot)).toContain(2);
  });

  it('a throwing policy ends the episodes it was asked for with `act failed`', async () => {
    const failing: FlowPolicy = {
      description: 'failing',
      begin() {},
      act() {
        throw new Error('no idea');
      },
    };
    const { results } = await viaFlow(new StubEnv(), failing, { horizon: 5, lanes: 2, plans: stubPlans(2) });
    expect(results.map((r) => [r.trajectory.outcome, r.trajectory.error, r.turnCount])).toEqual([
      ['error', 'act failed: no idea', 0],
      ['error', 'act failed: no idea', 0],
    ]);
  });

  it('one deadline sweep fails every episode of a late batch with the step timeout message; the late answer is ignored', async () => {
    const clock = new SimulatedClock();
    const env = new StubEnv((op) => (op.kind === OP.step ? 'hang' : { observation: { text: 'o' }, reward: 0, done: false }));
    const firstStep = env.seen((op) => op.kind === OP.step);
    const run = viaFlow(env, cycleFlowPolicy(), { horizon: 5, lanes: 3, plans: stubPlans(3), clock, envTimeoutMs: 1000 });
    await firstStep;
    clock.advance(999);
    let done = false;
    void run.then(() => {
      done = true;
    });
    await Promise.resolve();
    expect(done).toBe(false);
    clock.advance(1);
    const { results } = await run;
    expect(results.map((r) => [r.trajectory.outcome, r.trajectory.error])).toEqual(
      Array.from({ length: 3 }, () => ['error', "environment 'babyai' failed: step timed out after 1000 ms"]),
    );
  });

  it('an abort ends every live episode in error with the reason and starts no more', async () => {
    const controller = new AbortController();
    const env = new StubEnv((op) => (op.kind === OP.step ? 'hang' : { observation: { text: 'o' }, reward: 0, done: false }));
    const firstStep = env.seen((op) => op.kind === OP.step);
    const run = viaFlow(env, cycleFlowPolicy(), { horizon: 5, lanes: 2, plans: stubPlans(10), signal: controller.signal });
    await firstStep;
    controller.abort('stop');
    const { results } = await run;
    const ended = results.filter((r) => r !== undefined);
    expect(ended.map((r) => r.trajectory.error)).toEqual(['aborted: stop', 'aborted: stop']);
    expect(env.ops.filter((op) => op.kind === OP.reset)).toHaveLength(2);
  });

  it('stops after the wave that spends a turn budget, cutting the live episodes without results', async () => {
    // Episodes that never end by themselves: 3 lanes play one turn each per wave.
    const env = new StubEnv(() => ({ observation: { text: 'o', availableActions: ['a', 'b'] }, reward: 0, done: false }));
    const { results, driver } = await viaFlow(env, cycleFlowPolicy(), { horizon: 100, lanes: 3, plans: stubPlans(10), budget: { turns: 7 } });
    // Waves bring 3, 6, 9 turns: the third spends the budget and is the last.
    expect(driver.stats()).toMatchObject({ turns: 9, cut: 3 });
    expect(results.filter((r) => r !== undefined)).toEqual([]);
    expect(env.ops.filter((op) => op.kind === OP.reset)).toHaveLength(3);
    expect(env.ops.filter((op) => op.kind === OP.step)).toHaveLength(9);
  });

  it('stops at a clock budget the same way', async () => {
    const clock = new SimulatedClock();
    const env = new StubEnv(() => {
      clock.advance(10); // every answer takes 10 ms of simulated time
      return { observation: { text: 'o', availableActions: ['a', 'b'] }, reward: 0, done: false };
    });
    const { driver } = await viaFlow(env, cycleFlowPolicy(), { horizon: 100, lanes: 2, plans: stubPlans(10), clock, budget: { until: 45 } });
    expect(driver.stats().cut).toBe(2);
    expect(clock.now()).toBeGreaterThanOrEqual(45);
    expect(driver.stats().turns).toBeLessThan(10);
  });
});
