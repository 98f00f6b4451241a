/**
 * Held-out evaluation: one sampled episode on each of the first `tasks` tasks of a split, with the
 * same episode seeds at every evaluation (common random numbers), so two evaluations differ
 * because the policy changed, not because the dice did.
 */
import type { ResolvedConfig } from '../core/config.js';
import { Rng } from '../core/rng.js';
import type { Split, Trajectory } from '../core/types.js';
import type { TaskCatalog } from '../envs/environment.js';
import type { EpisodePlan, RolloutRunner } from './rollout.js';
import { failIfAllEpisodesFailed } from './rollout-health.js';
import { type EpisodeSummary, summarizeEpisodes } from './rollout-metrics.js';

/** What an evaluation returns. */
export interface EvaluationResult {
  readonly trajectories: Trajectory[];
  readonly summary: EpisodeSummary;
  /** Summary per reporting category (e.g. BabyAI GoTo / Pickup), when the catalog has categories. */
  readonly perCategory: Readonly<Record<string, EpisodeSummary>>;
}

/** The fixed evaluation plans of a split. */
export function evaluationPlans(config: ResolvedConfig, catalog: TaskCatalog, split: Split, tasks: number): EpisodePlan[] {
  const indices = catalog.indices(split).slice(0, tasks);
  const seeds = Rng.fromSeed(config.seed).fork('eval', split === 'test' ? 1 : 0);
  return indices.map((taskIndex, i) => ({
    taskId: `${config.env.name}_${taskIndex}`,
    taskIndex,
    groupId: `eval/${split}/${i}`,
    trajectoryId: `eval/${split}/${i}`,
    seed: seeds.int(0x7fffffff),
  }));
}

/**
 * Runs an evaluation with the policy currently loaded in the samplers.
 * @example const { summary } = await evaluatePolicy({ config, catalog, runner, split: 'test', tasks: 256, step: 10 });
 */
export async function evaluatePolicy(input: {
  readonly config: ResolvedConfig;
  readonly catalog: TaskCatalog;
  readonly runner: RolloutRunner;
  readonly split: Split;
  readonly tasks: number;
  /** Completed training steps (labels the trajectories). */
  readonly step: number;
  /** Horizon for evaluation episodes; default the largest the run uses. */
  readonly horizon?: number;
}): Promise<EvaluationResult> {
  const { config, catalog, runner, split, tasks, step } = input;
  const plans = evaluationPlans(config, catalog, split, tasks).map((p) => ({
    ...p,
    groupId: `${p.groupId}@${step}`,
    trajectoryId: `${p.trajectoryId}@${step}`,
  }));
  const trajectories = await runner.run(step, input.horizon ?? config.derived.maxHorizon, plans);
  failIfAllEpisodesFailed(`the ${split} evaluation at step ${step}`, trajectories);
  const byCategory = new Map<string, Trajectory[]>();
  if (catalog.category) {
    plans.forEach((plan, i) => {
      const category = catalog.category?.(plan.taskIndex);
      if (category === undefined) return;
      const list = byCategory.get(category) ?? [];
      list.push(trajectories[i] as Trajectory);
      byCategory.set(category, list);
    });
  }
  const perCategory: Record<string, EpisodeSummary> = {};
  for (const [category, list] of byCategory) perCategory[category] = summarizeEpisodes(list);
  return { trajectories, summary: summarizeEpisodes(trajectories), perCategory };
}
