/**
 * A checkpoint on the flow path (issue #20: the model in inference workers behind the sampler's
 * batcher, one event-driven episode machine per episode) plays exactly the episodes the training
 * path's episode actors play with the same checkpoint in-thread (eval harness agent: sampler on
 * an in-process bus, RolloutRunner): the same actions, rewards and outcomes, turn by turn.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FlowResult } from '../../src/actors/episode-flow.js';
import { systemClock } from '../../src/core/clock.js';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import type { Trajectory } from '../../src/core/types.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { openAgent } from '../../src/runtime/agents.js';
import { checkpointSpec } from '../../src/runtime/policy-spec.js';
import type { EpisodePlan } from '../../src/runtime/rollout.js';
import { openCheckpointFlow } from '../../src/runtime/simulate/checkpoint-flow.js';
import { trainRun } from '../../src/runtime/train/train-run.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-model-flow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const view = (t: Trajectory) => ({
  id: t.trajectoryId,
  outcome: t.outcome,
  reward: t.reward,
  final: t.finalObservationText,
  turns: t.turns.map((turn) => [turn.index, turn.observationText, turn.actionText, turn.reward]),
});

describe('a checkpoint on the flow path', () => {
  it('plays the same episodes as the episode actors with the in-thread sampler', async () => {
    const settings = { levels: ['GoToRedBall', 'GoToObjS6'] };
    const config = resolveConfig(
      parseConfig({
        seed: 5,
        run: { dir, name: 'flow' },
        env: { name: 'babyai', settings },
        model: { dModel: 32, nLayers: 1, nHeads: 2, ffnHidden: 48 },
        // history 1: the context carries the previous turn's sampled ids, so turns depend on each other.
        context: { history: 1 },
        algorithm: { tasksPerStep: 2, groupSize: 4 },
        horizon: { schedule: 'fixed', horizon: 4 },
        train: { steps: 1, evalEvery: 0, checkpointEvery: 1 },
        // The run (and so the eval agent below) samples on the main thread; the flow path asks for 2 workers.
        runtime: { inferenceWorkers: 0 },
      }),
    );
    const runDir = join(dir, 'flow');
    expect((await trainRun({ config, runDir })).status).toBe('finished');
    const spec = getEnvironmentSpec('babyai');
    const indices = spec.catalog({ settings }).indices('train');
    const plans: EpisodePlan[] = Array.from({ length: 30 }, (_, i) => ({ taskId: `babyai_${indices[i]}`, taskIndex: indices[i] as number, groupId: `g${i}`, trajectoryId: `t${i}`, seed: 77 + 31 * i }));
    const horizon = 4;

    expect(config.runtime.inferenceWorkers).toBe(0);
    const agent = await openAgent(checkpointSpec(runDir), { spec, envSettings: settings, clock: systemClock, poolSize: 8, field: '--policy' });
    const viaActors = await agent.runner.run(0, horizon, plans);
    await agent.close();

    const flow = await openCheckpointFlow({ location: runDir, spec, envSettings: settings, lanes: 7, horizon, envWorkers: 0, envTimeoutMs: 30_000, clock: systemClock, inferenceWorkers: 2, recordTurns: true });
    const viaFlow: Trajectory[] = new Array(plans.length);
    try {
      expect(flow.description).toMatch(/sampling: 2 inference workers/);
      await flow.driver.run(
        (i) => plans[i] ?? null,
        (i, r: FlowResult) => {
          viaFlow[i] = r.trajectory;
        },
      );
    } finally {
      await flow.close();
    }
    expect(viaActors.some((t) => t.turns.length > 1)).toBe(true);
    expect(viaFlow.map(view)).toEqual(viaActors.map(view));
  });
});
