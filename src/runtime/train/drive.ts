/**
 * Step 4 of a training run: driving the coordinator's effects to the last step — the coordinator
 * actor in `sync` mode (rollout → train → evaluate? → checkpoint?, one step at a time), the
 * asynchronous loop (`src/runtime/async/`) in `one-step-off` and `async` modes. An abort (Ctrl-C)
 * or a `stop` alarm stops either after the current phase, with a checkpoint.
 */
import { createActor, toPromise } from 'xstate';
import { type CoordinatorEffects, type CoordinatorOutput, withCoordinatorEffects } from '../../actors/coordinator.js';
import type { Trajectory } from '../../core/types.js';
import { runAsyncTraining } from '../async/async-train.js';
import { withDeadline } from '../async/deadline.js';
import { announceWeights } from '../wiring/sampler.js';
import { type TrainingActors, waitForWeights } from './actors.js';
import type { OpenedRun } from './open-run.js';
import { trainPlans } from './plans.js';
import type { AsyncStateSource } from './step-effects.js';
import type { TrainRunOptions } from './types.js';

/**
 * Runs the steps from `run.startStep` to `train.steps` (or until stopped or failed).
 * @example const output = await driveTraining(run, actors, effects, options, asyncState);
 */
export async function driveTraining(
  run: OpenedRun,
  actors: TrainingActors,
  effects: CoordinatorEffects,
  options: TrainRunOptions,
  asyncState: AsyncStateSource,
): Promise<CoordinatorOutput> {
  const signal = options.signal ? AbortSignal.any([options.signal, run.alarmStop.signal]) : run.alarmStop.signal;
  return run.config.mode === 'sync' ? driveSync(run, effects, signal) : driveAsync(run, actors, effects, signal, asyncState);
}

async function driveSync(run: OpenedRun, effects: CoordinatorEffects, signal: AbortSignal): Promise<CoordinatorOutput> {
  const { config } = run;
  const coordinator = createActor(withCoordinatorEffects(effects), {
    input: { startStep: run.startStep, totalSteps: config.train.steps, evalEvery: config.train.evalEvery, checkpointEvery: config.train.checkpointEvery },
    clock: run.clock,
  });
  const onAbort = () => coordinator.send({ type: 'STOP' });
  signal.addEventListener('abort', onAbort);
  coordinator.start();
  if (signal.aborted) onAbort(); // a signal that came while the run was being set up
  const output = await toPromise(coordinator);
  signal.removeEventListener('abort', onAbort);
  return output;
}

/** one-step-off / async: the same effects, driven by the asynchronous loop. */
async function driveAsync(run: OpenedRun, actors: TrainingActors, effects: CoordinatorEffects, signal: AbortSignal, asyncState: AsyncStateSource): Promise<CoordinatorOutput> {
  const { config, clock, stack } = run;
  return runAsyncTraining({
    config,
    effects,
    startStep: run.startStep,
    restored: run.restoredStaleness,
    plans: (step) => trainPlans(config, run.trainIndices, step, run.runId),
    horizon: () => actors.currentHorizon(),
    runEpisode: async (step, stepHorizon, plan) => (await actors.runner.run(step, stepHorizon, [plan]))[0] as Trajectory,
    samplerVersion: () => actors.sampler.getSnapshot().context.policyVersion,
    learnerVersion: () => stack.trainer.version,
    publishWeights: async (version) => {
      const loaded = waitForWeights(actors.sampler, version);
      announceWeights(actors.bus, run.runId, version, stack.samplerWeights());
      await withDeadline(loaded, config.async.weightSyncTimeoutMs, clock, `the sampler to load weights ${version}`);
    },
    exposeState: (read) => {
      asyncState.read = read;
    },
    clock,
    signal,
  });
}
