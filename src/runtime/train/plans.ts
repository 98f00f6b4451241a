/**
 * The episodes of one training step, derived from the seed and the step alone (never from a shared
 * mutable stream), so a resumed run and every training mode see the same tasks and seeds per step.
 */
import type { ResolvedConfig } from '../../core/config.js';
import { Rng } from '../../core/rng.js';
import type { EpisodePlan } from '../rollout.js';

/**
 * Episodes of training step `step`: `tasksPerStep` train tasks, `groupSize` samples each. Trajectory
 * ids are `<runId>/s<step>/t<task>/g<sample>`: unique across runs, so a stream, a store or a
 * message-id window shared with another run never takes one run's episode for another's.
 * @example trainPlans(config, catalog.indices('train'), 0, runId).length // tasksPerStep * groupSize
 */
export function trainPlans(config: ResolvedConfig, trainIndices: readonly number[], step: number, runId: string): EpisodePlan[] {
  const root = Rng.fromSeed(config.seed);
  const taskRng = root.fork('tasks', step);
  const seedRng = root.fork('episodes', step);
  const plans: EpisodePlan[] = [];
  for (let t = 0; t < config.algorithm.tasksPerStep; t++) {
    const taskIndex = trainIndices[taskRng.int(trainIndices.length)] as number;
    const taskId = `${config.env.name}_${taskIndex}`;
    const groupId = `s${step}/t${t}`;
    for (let g = 0; g < config.algorithm.groupSize; g++) {
      plans.push({ taskId, taskIndex, groupId, trajectoryId: `${runId}/${groupId}/g${g}`, seed: seedRng.int(0x7fffffff) });
    }
  }
  return plans;
}
