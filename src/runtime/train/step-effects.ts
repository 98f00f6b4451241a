/**
 * Step 3 of a training run: what the coordinator's phases do — roll out a step's episodes, store
 * them and train on them, evaluate on the held-out split, checkpoint, and log a completed step.
 * The synchronous coordinator and the asynchronous loops drive the same effects.
 */
import type { CoordinatorEffects } from '../../actors/coordinator.js';
import { persistHorizon } from '../../actors/horizon.js';
import { evalHorizonFor, type HorizonSpec } from '../../actors/horizon-per-env.js';
import type { Trajectory } from '../../core/types.js';
import { saveCheckpoint } from '../../models/checkpoint.js';
import type { StalenessState } from '../async/staleness.js';
import { evaluatePolicy } from '../evaluate.js';
import { rolloutMetrics } from '../rollout-metrics.js';
import type { TrainingActors } from './actors.js';
import type { OpenedRun } from './open-run.js';
import { trainPlans } from './plans.js';
import { failIfAllEpisodesFailed } from '../rollout-health.js';
import { faultPoint } from '../../core/fault-point.js';
import type { EvalPoint, TrainRunOptions } from './types.js';
import { NonFiniteTrainingError, nonFiniteMetrics } from '../alarms/non-finite.js';

/** A step whose loss or gradients went non-finite: the alarm is stored and reported, and the run stops before any checkpoint of it. */
function stopIfNonFinite(run: OpenedRun, completedSteps: number, metrics: Readonly<Record<string, number>>): void {
  const bad = nonFiniteMetrics(metrics);
  if (bad.length === 0) return;
  const values = Object.fromEntries(bad.map((name) => [name, metrics[name] as number]));
  const error = new NonFiniteTrainingError(completedSteps, values);
  const consequence = 'the run stops without a checkpoint of this step (resumable from the last one)';
  // NaN is not JSON: the values go into the event as text.
  run.store.logEvent(completedSteps, 'alarm/nonFinite', `${error.message}`, { alarm: 'nonFinite', metrics: bad, values: Object.fromEntries(bad.map((name) => [name, String(metrics[name])])), action: 'stop', consequence });
  run.emit({ type: 'alarm', step: completedSteps, name: 'nonFinite', message: `non-finite training: ${bad.map((n) => `${n} ${metrics[n]}`).join(', ')}`, action: 'stop', consequence });
  throw error;
}

/** Evaluates the policy after `completedSteps` steps, stores the episodes and metrics, returns the metrics. */
export type Evaluate = (completedSteps: number) => Promise<Record<string, number>>;

/**
 * The held-out evaluation of a run; every result is also appended to `evals`.
 * @example const evaluate = evaluator(run, actors, evals); await evaluate(0);
 */
export function evaluator(run: OpenedRun, actors: TrainingActors, evals: EvalPoint[]): Evaluate {
  const { config, store, runId } = run;
  return async (completedSteps) => {
    const evalHorizon = evalHorizonFor(config.horizon as HorizonSpec, config.env.name);
    await actors.prepareEvaluation();
    const result = await evaluatePolicy({
      config,
      catalog: run.catalog,
      runner: actors.evalRunner,
      split: config.env.testSplit as 'test',
      tasks: config.train.evalTasks,
      step: completedSteps,
      ...(evalHorizon ? { horizon: evalHorizon } : {}),
    });
    store.recordTrajectories(runId, 'test', result.trajectories);
    const { successRate, meanTurns } = result.summary;
    const metrics = { 'eval/successRate': successRate, 'eval/meanTurns': meanTurns };
    store.logMetrics(completedSteps, metrics);
    evals.push({ step: completedSteps, successRate, meanTurns });
    run.emit({ type: 'eval', step: completedSteps, split: config.env.testSplit, successRate, meanTurns, episodes: result.trajectories.length });
    warnOnLength(run, 'evaluation', completedSteps, result.trajectories.length, result.trajectories.filter((t) => t.outcome === 'length').length);
    return metrics;
  };
}

/** A loud line (an alarm event, and one in the run's events) when most episodes of a step or an evaluation ended by length. */
function warnOnLength(run: OpenedRun, kind: 'step' | 'evaluation', step: number, episodes: number, ended: number): void {
  const warning = run.lengths.observe(kind, step, episodes, ended);
  if (warning === null) return;
  run.store.logEvent(step, 'warning/length', warning.message);
  run.emit({ type: 'alarm', step, name: 'lengthTruncation', message: warning.message, action: 'warn', consequence: 'the run goes on' });
}

/** Where the asynchronous loop's staleness state is read from at checkpoint time (set by that loop). */
export interface AsyncStateSource {
  read: (() => StalenessState) | null;
}

/**
 * The coordinator's effects for this run.
 * @example const effects = coordinatorEffects(run, actors, evaluate, options, { read: null });
 */
export function coordinatorEffects(run: OpenedRun, actors: TrainingActors, evaluate: Evaluate, options: TrainRunOptions, asyncState: AsyncStateSource): CoordinatorEffects {
  const { config, clock, store, runId } = run;
  // Rollout metrics of a step, held until its training metrics join them.
  const pending = new Map<number, Record<string, number>>();
  return {
    rollout: async (step) => {
      const started = clock.now();
      actors.sampledTokens.count = 0;
      const plans = trainPlans(config, run.trainIndices, step, runId);
      const stepHorizon = actors.currentHorizon();
      const trajectories = options.distributed ? await options.distributed.rollout(step, stepHorizon, plans) : await actors.runner.run(step, stepHorizon, plans);
      // A dead environment server fails the run here (resumable) instead of training on error episodes.
      failIfAllEpisodesFailed(`step ${step}`, trajectories);
      const seconds = (clock.now() - started) / 1000;
      pending.set(step, {
        ...rolloutMetrics(trajectories, seconds, config.reward.mode),
        'throughput/sampleTokensPerSec': seconds > 0 ? actors.sampledTokens.count / seconds : 0,
        'horizon/current': stepHorizon,
        'horizon/stage': actors.horizon.getSnapshot().context.stage,
      });
      return trajectories;
    },
    train: async (step, trajectories: readonly Trajectory[]) => {
      // Stored before training: what the learner trains on is already durable.
      store.recordTrajectories(runId, 'train', trajectories);
      faultPoint('trajectories-stored');
      const started = clock.now();
      const { metrics } = await actors.train(step, trajectories);
      stopIfNonFinite(run, step + 1, metrics);
      return { metrics: { ...pending.get(step), ...metrics, 'time/trainSec': (clock.now() - started) / 1000 } };
    },
    // In the background (mode sync): returns at once; the learner's next weight publish and the next
    // step's log wait for it (background-eval.ts). Its metrics are stored and printed when it ends.
    evaluate: async (step) => {
      if (actors.background === null) return evaluate(step + 1);
      actors.background.start(step + 1, () => evaluate(step + 1));
      return {};
    },
    checkpoint: async (completedSteps) => {
      const dir = await saveCheckpoint(
        run.runDir,
        await run.stack.checkpointContent(completedSteps, {
          horizon: persistHorizon(actors.horizon.getSnapshot()),
          alarms: run.alarms.persist(),
          seed: config.seed,
          backend: run.backend.name,
          // A LoRA checkpoint holds only adapters: the base they go on is checked against this at resume, eval and serve.
          ...(run.baseModel !== null ? { baseModel: run.baseModel } : {}),
          ...(asyncState.read !== null ? { async: asyncState.read() } : {}),
        }),
      );
      store.logEvent(completedSteps, 'checkpoint', `saved ${dir}`);
      await options.distributed?.checkpointed?.(completedSteps);
    },
    stepCompleted: async (step, metrics) => {
      await actors.background?.settled(); // the previous evaluation's line and metrics come first
      pending.delete(step);
      actors.progress.step = step + 1;
      store.logMetrics(step + 1, metrics);
      run.alarms.observe(step + 1, metrics, metrics['horizon/current'] ?? actors.currentHorizon());
      actors.horizon.send({ type: 'STEP_COMPLETED', step, metrics });
      run.emit({ type: 'step', step: step + 1, metrics });
      const episodes = config.derived.episodesPerStep;
      warnOnLength(run, 'step', step + 1, episodes, Math.round((metrics['rollout/lengthTruncationRate'] ?? 0) * episodes));
    },
  };
}
