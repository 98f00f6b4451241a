/**
 * Environment worker pools (real piscina threads; from these sources the workers run the `.ts`
 * source through tsx) and `turnwise simulate` as a user runs it (from `dist/`: `npm run build`
 * first, as `.ci/run` does).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import type { Trajectory } from '../../src/core/types.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { MemoryBus } from '../../src/bus/memory-bus.js';
import { type EpisodePlan, RolloutRunner } from '../../src/runtime/rollout.js';
import { randomPolicy } from '../../src/runtime/simulate/sim-policies.js';
import { createBatchEnv } from '../../src/runtime/env-pool/batch-env.js';
import { FlowDriver } from '../../src/runtime/simulate/flow-driver.js';
import { randomFlowPolicy } from '../../src/runtime/simulate/flow-policies.js';

const settings = { levels: ['GoToRedBall', 'GoToRedBallGrey', 'GoToObjS6'] };

async function rollout(envWorkers: number): Promise<{ trajectories: Trajectory[]; placement: string }> {
  const bus = new MemoryBus({ clock: systemClock });
  const runner = new RolloutRunner({
    bus,
    runId: 'determinism',
    spec: getEnvironmentSpec('babyai'),
    envSettings: settings,
    poolSize: 12,
    envWorkers,
    constrained: false,
    envTimeoutMs: 30_000,
    actTimeoutMs: 30_000,
    clock: systemClock,
    textPolicy: randomPolicy(),
  });
  const indices = getEnvironmentSpec('babyai').catalog({ settings }).indices('train');
  const plans: EpisodePlan[] = Array.from({ length: 40 }, (_, i) => ({
    taskId: `babyai_${indices[i]}`,
    taskIndex: indices[i] as number,
    groupId: `g${i}`,
    trajectoryId: `t${i}`,
    seed: 1000 + i * 7919,
  }));
  const trajectories = await runner.run(0, 8, plans);
  const placement = runner.envPlacement;
  await runner.close();
  await bus.close();
  return { trajectories, placement };
}

/** The same plans on the flow path (`turnwise simulate`): flow actors, batched driver, batch environments. */
async function flowRollout(envWorkers: number, maxBatch: number): Promise<{ trajectories: Trajectory[]; placement: string }> {
  const spec = getEnvironmentSpec('babyai');
  const env = createBatchEnv(spec, settings, envWorkers);
  const driver = new FlowDriver({ env, policy: randomFlowPolicy(), envName: 'babyai', lanes: 12, step: 0, horizon: 8, envTimeoutMs: 30_000, clock: systemClock, recordTurns: true, maxBatch });
  const indices = spec.catalog({ settings }).indices('train');
  const trajectories: Trajectory[] = [];
  await driver.run(
    (i) => (i < 40 ? { taskId: `babyai_${indices[i]}`, taskIndex: indices[i] as number, groupId: `g${i}`, trajectoryId: `t${i}`, seed: 1000 + i * 7919 } : null),
    (i, r) => {
      trajectories[i] = r.trajectory;
    },
  );
  await env.close();
  return { trajectories, placement: env.description };
}

const view = (t: Trajectory) => ({
  outcome: t.outcome,
  reward: t.reward,
  final: t.finalObservationText,
  turns: t.turns.map((turn) => [turn.observationText, turn.actionText, turn.reward, turn.invalidAction]),
});

describe('environment worker pools', () => {
  it('gives the same trajectories in-process and in 1 or 3 worker threads for the same seeds', async () => {
    const inProcess = await rollout(0);
    const one = await rollout(1);
    const three = await rollout(3);
    expect(inProcess.placement).toBe('in-process');
    expect(three.placement).toBe('3 worker threads');
    expect(inProcess.trajectories.every((t) => t.outcome !== 'error')).toBe(true);
    // The random policy plays several turns on most tasks: the comparison covers many steps.
    expect(inProcess.trajectories.reduce((n, t) => n + t.turns.length, 0)).toBeGreaterThan(100);
    expect(one.trajectories.map(view)).toEqual(inProcess.trajectories.map(view));
    expect(three.trajectories.map(view)).toEqual(inProcess.trajectories.map(view));
  });

  it('the flow path gives the episode actors’ trajectories in-process and in 1 or 3 worker threads, whatever the batch size', async () => {
    const reference = (await rollout(0)).trajectories.map(view);
    const runs = [await flowRollout(0, 1024), await flowRollout(1, 5), await flowRollout(3, 1024)];
    expect(runs.map((r) => r.placement)).toEqual(['in-process', '1 worker thread', '3 worker threads']);
    for (const run of runs) expect(run.trajectories.map(view)).toEqual(reference);
  });

  it('leaves no threads behind: a process that closes its pool exits on its own', () => {
    const script = [
      "import { WorkerEnvPool } from './dist/src/runtime/env-pool/index.js';",
      "const pool = new WorkerEnvPool({ envName: 'babyai', settings: { levels: ['GoToRedBall'] }, workers: 2 });",
      'const envs = [pool.open(), pool.open(), pool.open()];',
      'const obs = await Promise.all(envs.map((e, i) => e.reset(1040 + i)));',
      "await envs[0].step('turn left');",
      'const { batches, ops } = pool.stats();',
      'await pool.close();',
      'console.log(JSON.stringify({ n: obs.length, batches, ops }));',
    ].join('\n');
    // No process.exit: if a worker thread survived close(), the child would hang until the timeout.
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    const out = JSON.parse(child.stdout) as { n: number; batches: number; ops: number };
    expect(out.n).toBe(3);
    // Three resets issued in one turn of the event loop go out as one message per shard (2), then the step (1).
    expect(out).toEqual({ n: 3, batches: 3, ops: 4 });
  });

  it('`turnwise simulate` runs 200 agents with environments in 2 workers and reports consistent numbers', () => {
    const child = spawnSync(
      process.execPath,
      ['dist/src/cli/main.js', 'simulate', 'configs/babyai-grpo.yaml', '--agents', '200', '--turns', '800', '--env-workers', '2', '--policy', 'random', '--json'],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(child.status).toBe(0);
    const report = JSON.parse(child.stdout) as {
      agents: number;
      envPlacement: string;
      episodes: number;
      cutAtBudget: number;
      turns: number;
      turnsPerSecond: number;
      seconds: number;
      outcomes: Record<string, number>;
      horizon: number;
      eventLoopLagMs: { p50: number; p99: number; max: number };
    };
    expect(report.agents).toBe(200);
    expect(report.envPlacement).toBe('2 worker threads');
    expect(Object.values(report.outcomes).reduce((a, b) => a + b, 0)).toBe(report.episodes);
    expect(report.outcomes.error).toBe(0);
    // The budget, plus at most the rest of the wave that reached it; the episodes in flight are cut.
    expect(report.turns).toBeGreaterThanOrEqual(800);
    expect(report.turns).toBeLessThan(800 + 200);
    expect(report.turns).toBeLessThanOrEqual((report.episodes + report.cutAtBudget) * report.horizon);
    expect(report.turnsPerSecond).toBeCloseTo(report.turns / report.seconds, 6);
    expect(report.eventLoopLagMs.p99).toBeGreaterThanOrEqual(report.eventLoopLagMs.p50);
  });

  it('`turnwise simulate` names the bad flag and exits 2', () => {
    const child = spawnSync(process.execPath, ['dist/src/cli/main.js', 'simulate', 'configs/babyai-grpo.yaml', '--agents', '10', '--policy', 'greedy'], { encoding: 'utf8' });
    expect(child.status).toBe(2);
    expect(child.stderr).toMatch(/invalid '--policy': expected scripted, random, random:tools, checkpoint:<run or checkpoint folder> or remote:<name>=<baseURL>,model=<model>\[,…\], got 'greedy'/);
  });
});
