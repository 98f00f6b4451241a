/**
 * Assembles and runs one training job on the embedded default: every actor of the picture in
 * docs/architecture.md, connected over an in-process bus exactly as `src/runtime/wiring/message-flow.ts` lists.
 * {@link trainRun} reads top to bottom; each step is one file of `src/runtime/train/`.
 *
 * Randomness: every stream derives from `config.seed` and the step or episode it serves
 * (`rng.fork('tasks', step)`, per-episode and per-turn seeds), never from a shared mutable stream.
 * A resumed run therefore needs only the step count, the weights, the optimizer and the horizon
 * state to continue the same curves.
 *
 * Reading order, from here to the PPO loss (`src/runtime/reference-loop.ts` is the same loop on
 * one page, without bus or actors, and a test keeps the two bit-identical):
 *  1. `runtime/train/train-run.ts` (this file): claim the run folder, open the run, start the actors, drive.
 *  2. `runtime/train/open-run.ts`: backend, environment, checkpoint, run store, and the models
 *     (`runtime/engine-stack.ts` → `runtime/policy-stack.ts`: tokenizer, model, sampler policy, trainer).
 *  3. `runtime/train/actors.ts`: the sampler, learner and horizon actors on a `MemoryBus`, and the rollout runner.
 *  4. `runtime/train/drive.ts`: the coordinator actor (mode sync) or the asynchronous loop (`runtime/async/`).
 *  5. `actors/coordinator.ts`: rollout → train → evaluate? → checkpoint?, one step at a time.
 *  6. `runtime/train/step-effects.ts`: what each phase does; `runtime/train/plans.ts`: a step's tasks and seeds.
 *  7. `runtime/rollout.ts`: env sessions, one episode actor per plan, and the context each turn sends.
 *  8. `actors/episode.ts`: one episode, reset → act → step until done or the horizon.
 *  9. `runtime/wiring/episode.ts`, `runtime/wiring/sampler.ts`: an episode's act request over the bus.
 * 10. `actors/sampler.ts`: dynamic batching of act requests and weight swaps.
 * 11. `models/transformer-policy.ts`: batched decoding; sampled ids and their behaviour log-probs.
 * 12. `runtime/wiring/learner.ts` → `actors/learner.ts`: the step's trajectories to the trainer.
 * 13. `learner/trainer.ts`: one update — prepare, gradients, clip, Adam.
 * 14. `learner/train-signals.ts`: per-token layout, advantages, packed micro-batches.
 * 15. `algorithms/advantages.ts` (GRPO: `algorithms/group-baselines.ts`): the estimator.
 * 16. `learner/grad-accumulate.ts`: forward, loss and summed gradients of a mini-batch.
 * 17. `algorithms/losses.ts`: `ppoClipLoss`, the PPO-clip surrogate.
 */
// Registers every built-in environment, so callers need not import them themselves.
import '../../envs/index.js';
import type { CoordinatorOutput } from '../../actors/coordinator.js';
import { InvalidConfigError } from '../../core/errors.js';
import { getEnvironmentSpec } from '../../envs/registry.js';
import { describeBackend, selectBackend } from '../../backend/select.js';
import { checkPretrainedContext } from '../pretrained-stack.js';
import { nativeAdamAvailable } from '../../backend/native-adam.js';
import { checkRunMemory, memoryLimitsOf } from '../run-memory.js';
import { describeGradientWorkers } from '../gradient-workers.js';
import { startTrainingActors, type TrainingActors } from './actors.js';
import { driveTraining } from './drive.js';
import { type ClaimedRunFolder, claimRunFolder, releaseUnusedRunFolder } from '../run-folder.js';
import { checkTrainRunOptions, type OpenedRun, openRun } from './open-run.js';
import { type AsyncStateSource, coordinatorEffects, type Evaluate, evaluator } from './step-effects.js';
import type { EvalPoint, TrainRunOptions, TrainRunResult } from './types.js';

export { trainPlans } from './plans.js';
export type { DistributedRollout, EvalPoint, TrainRunOptions, TrainRunResult } from './types.js';

/**
 * Runs (or resumes) a training job to its configured number of steps. The run folder is held
 * (one writer) from before anything is read or written until the run ends.
 * @example const result = await trainRun({ config: resolveConfig(loadConfig('configs/babyai-grpo.yaml')) });
 */
export async function trainRun(options: TrainRunOptions): Promise<TrainRunResult> {
  checkTrainRunOptions(options);
  // Refused before the folder is claimed: an unknown environment or settings key, and a config too
  // large for this machine (with its estimate, before anything is allocated).
  const { config } = options;
  const spec = getEnvironmentSpec(config.env.name);
  const envOptions = { settings: config.env.settings as Record<string, unknown> };
  spec.catalog(envOptions);
  // reward.mode sum trains on per-turn rewards: refused where the environment pays none.
  if (config.reward.mode === 'sum' && spec.paysTurnRewards?.(envOptions) === false) {
    throw new InvalidConfigError('reward.mode', `'sum' trains on per-turn rewards, and ${spec.name} with these settings pays only a final reward; use 'outcome'${['wordle', 'textcraft', 'deepsearch'].includes(spec.name) ? ', or set env.settings.turnRewards: true' : ''}`);
  }
  const backend = await selectBackend(config.model.backend, { matmul: config.model.matmul });
  checkRunMemory(config, memoryLimitsOf(backend.name), { optimizerOnHost: nativeAdamAvailable() });
  await checkPretrainedContext(config); // a context too short for the first prompts, refused before any weight is read
  // 0. The run folder, held by this process alone (one writer: ../run-lock.ts) until the run ends.
  const folder = await claimRunFolder(options, config.run);
  try {
    return await trainInFolder(options, folder);
  } finally {
    folder.lock.release();
    // Refused while opening (a bad model folder): the name is free again, no `<name>-2` for the next run.
    if (!folder.resuming) await releaseUnusedRunFolder(folder.runDir);
  }
}

async function trainInFolder(options: TrainRunOptions, folder: ClaimedRunFolder): Promise<TrainRunResult> {
  // 1. Backend, environment, checkpoint (when resuming), models, run store.
  const run = await openRun(options, folder);
  const { stack, store, emit } = run;

  // 2. The actors: sampler, learner, horizon scheduler, rollout runner, on one in-process bus.
  const actors = startTrainingActors(run, options);

  // 3. What each coordinator phase does; evaluations are collected for the result.
  const evals: EvalPoint[] = [];
  const evaluate = evaluator(run, actors, evals);
  const asyncState: AsyncStateSource = { read: null };
  const effects = coordinatorEffects(run, actors, evaluate, options, asyncState);

  // 4. Announce, evaluate the untrained policy, then run the steps.
  for (const note of stack.notes) emit({ type: 'info', message: note });
  emit({ type: 'info', message: `actions: ${actors.runner.actionMode} (context.actions ${run.config.context.actions})` });
  emit({ type: 'info', message: `${describeBackend(run.backend)} | sampling: ${stack.policy.placement}${actors.background === null ? '' : ' (and as many more for evaluations beside the rollout)'} | ${describeGradientWorkers(run.config)} | run folder ${run.runDir} | ${stack.summary}, vocab ${stack.text.vocabSize}` });
  await options.distributed?.start({ runId: run.runId, store, text: stack.text.manifest(), version: stack.trainer.version, weights: stack.samplerWeights() });
  const driven = (await evaluateUntrained(run, actors, evaluate)) ?? (await driveTraining(run, actors, effects, options, asyncState));
  const output = await afterBackgroundEvaluation(actors, driven);

  // 5. Record how it ended, then stop everything in reverse order of starting.
  const finalStatus = output.status === 'finished' ? 'completed' : output.status === 'stopped' ? 'interrupted' : 'failed';
  store.setRunStatus(finalStatus);
  await options.distributed?.finish(finalStatus);
  await actors.close();
  run.stopExport();
  store.close();
  await stack.close(); // frees the models and waits for the gradient workers (train.dataParallel) to exit
  const lengthWarning = run.lengths.summary();
  return { runDir: run.runDir, runId: run.runId, status: output.status, completedSteps: output.completedSteps, error: output.error, evals, ...(lengthWarning === null ? {} : { warnings: [lengthWarning] }) };
}

/**
 * A run whose last evaluation ran in the background ends when it does; one that failed fails the
 * run (as a failed evaluation in the foreground does), unless the run had already failed.
 */
async function afterBackgroundEvaluation(actors: TrainingActors, output: CoordinatorOutput): Promise<CoordinatorOutput> {
  try {
    await actors.background?.settled();
    return output;
  } catch (error) {
    if (output.status === 'failed') return output;
    return { status: 'failed', completedSteps: output.completedSteps, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The held-out evaluation before the first step of a new run (in the background in mode sync); then announces the start. A failure
 * ends the run as a failed step's evaluation would (status `failed`, the message kept), so the run
 * is recorded as failed and everything started is stopped, instead of the error escaping with the
 * run still marked `running`. Returns null when training should go on.
 */
async function evaluateUntrained(run: OpenedRun, actors: TrainingActors, evaluate: Evaluate): Promise<CoordinatorOutput | null> {
  const { config } = run;
  if (run.startStep === 0 && config.train.evalEvery > 0) {
    if (actors.background !== null) {
      // Beside the first step's rollout; the start is announced after it, as in the foreground.
      actors.background.start(0, async () => {
        await evaluate(0);
        run.emit({ type: 'started', step: run.startStep, message: `training ${config.train.steps} steps` });
      });
      return null;
    }
    try {
      await evaluate(0);
    } catch (error) {
      return { status: 'failed', completedSteps: 0, error: `evaluate failed: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
  run.emit({ type: 'started', step: run.startStep, message: run.resuming ? `resuming at step ${run.startStep}` : `training ${config.train.steps} steps` });
  return null;
}
