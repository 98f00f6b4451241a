/**
 * Assembles and runs one training job on the embedded default: every actor of the picture in the
 * README ("How it is put together"), connected over an in-process bus exactly as
 * `src/runtime/wiring.ts` lists. {@link trainRun} reads top to bottom; each step is one file of
 * `src/runtime/train/`.
 *
 * Randomness: every stream derives from `config.seed` and the step or episode it serves
 * (`rng.fork('tasks', step)`, per-episode and per-turn seeds), never from a shared mutable stream.
 * A resumed run therefore needs only the step count, the weights, the optimizer and the horizon
 * state to continue the same curves.
 */
// Registers every built-in environment, so callers need not import them themselves.
import '../envs/index.js';
import { getEnvironmentSpec } from '../envs/registry.js';
import { describeBackend, selectBackend } from '../models/backend/select.js';
import { checkPretrainedContext } from './pretrained-stack.js';
import { checkRunMemory, memoryLimitsOf } from './run-memory.js';
import { startTrainingActors } from './train/actors.js';
import { driveTraining } from './train/drive.js';
import { type ClaimedRunFolder, claimRunFolder } from './run-folder.js';
import { checkTrainRunOptions, openRun } from './train/open-run.js';
import { type AsyncStateSource, coordinatorEffects, evaluator } from './train/step-effects.js';
import type { EvalPoint, TrainRunOptions, TrainRunResult } from './train/types.js';

export { trainPlans } from './train/plans.js';
export type { DistributedRollout, EvalPoint, TrainRunOptions, TrainRunResult } from './train/types.js';

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
  getEnvironmentSpec(config.env.name).catalog({ settings: config.env.settings as Record<string, unknown> });
  const backend = await selectBackend(config.model.backend, { matmul: config.model.matmul });
  checkRunMemory(config, memoryLimitsOf(backend.name));
  await checkPretrainedContext(config); // a context too short for the first prompts, refused before any weight is read
  // 0. The run folder, held by this process alone (one writer: ./run-lock.ts) until the run ends.
  const folder = await claimRunFolder(options, config.run);
  try {
    return await trainInFolder(options, folder);
  } finally {
    folder.lock.release();
  }
}

async function trainInFolder(options: TrainRunOptions, folder: ClaimedRunFolder): Promise<TrainRunResult> {
  // 1. Backend, environment, checkpoint (when resuming), models, run store.
  const run = await openRun(options, folder);
  const { config, stack, store, emit } = run;

  // 2. The actors: sampler, learner, horizon scheduler, rollout runner, on one in-process bus.
  const actors = startTrainingActors(run, options);

  // 3. What each coordinator phase does; evaluations are collected for the result.
  const evals: EvalPoint[] = [];
  const evaluate = evaluator(run, actors, evals);
  const asyncState: AsyncStateSource = { read: null };
  const effects = coordinatorEffects(run, actors, evaluate, options, asyncState);

  // 4. Announce, evaluate the untrained policy, then run the steps.
  for (const note of stack.notes) emit({ type: 'info', message: note });
  emit({ type: 'info', message: `${describeBackend(run.backend)} | sampling: ${stack.policy.placement} | run folder ${run.runDir} | ${stack.learnerModel.parameterCount} parameters, vocab ${stack.text.vocabSize}` });
  await options.distributed?.start({ runId: run.runId, store, text: stack.text.manifest(), version: stack.trainer.version, weights: stack.learnerModel.namedWeights() });
  if (run.startStep === 0 && config.train.evalEvery > 0) await evaluate(0);
  emit({ type: 'started', step: run.startStep, message: run.resuming ? `resuming at step ${run.startStep}` : `training ${config.train.steps} steps` });
  const output = await driveTraining(run, actors, effects, options, asyncState);

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
