/**
 * How many gradient workers the learner gets (`train.dataParallel`). The workers take whole
 * micro-batches and their gradients are added in micro-batch order, so the count changes the
 * wall time, never a number of the run (src/learner/data-parallel/gradient-pool.ts).
 */
import { availableParallelism } from 'node:os';
import type { ResolvedConfig } from '../core/config.js';

/** `auto` never starts more than this many: a step has only a few micro-batches to share out. */
export const AUTO_GRADIENT_WORKERS_CAP = 4;

/** What `auto` resolved to, and why, for the run's header line. */
export interface GradientWorkers {
  /** Gradient worker threads; 1 computes the gradients in the learner thread. */
  readonly count: number;
  /** Why `auto` gave 1 (null when it did not, or when the count was set by hand). */
  readonly reason: string | null;
}

/** The settings the count depends on. */
export type GradientWorkerConfig = Pick<ResolvedConfig, 'mode'> & {
  readonly train: Pick<ResolvedConfig['train'], 'dataParallel'>;
  readonly model: Pick<ResolvedConfig['model'], 'from' | 'engine'>;
  readonly algorithm: Pick<ResolvedConfig['algorithm'], 'policyLoss'>;
};

/**
 * `train.dataParallel` as a count: a number as set; `auto` one per core (at most
 * {@link AUTO_GRADIENT_WORKERS_CAP}) for turnwise's own model trained in mode sync, where the
 * cores are free while the learner trains; otherwise 1 — a pretrained model (model.from) or an
 * engine has no gradient workers, a registered policy loss lives in the learner thread, and in
 * the asynchronous modes the inference workers sample while the learner trains.
 * @example gradientWorkersOf(resolveConfig(parseConfig({}))).count // 2 on a 2-core machine
 */
export function gradientWorkersOf(config: GradientWorkerConfig, cores = availableParallelism()): GradientWorkers {
  const asked = config.train.dataParallel;
  if (asked !== 'auto') return { count: asked, reason: null };
  const one = (reason: string): GradientWorkers => ({ count: 1, reason });
  if (config.model.engine !== 'local') return one(`model.engine ${config.model.engine}`);
  if (config.model.from !== null) return one('a pretrained model (model.from)');
  if (config.algorithm.policyLoss !== 'ppo-clip') return one(`policy loss '${config.algorithm.policyLoss}' runs in the learner thread`);
  if (config.mode !== 'sync') return one(`mode ${config.mode}: the inference workers sample while the learner trains`);
  if (cores < 2) return one('one core');
  return { count: Math.min(cores, AUTO_GRADIENT_WORKERS_CAP), reason: null };
}

/**
 * The learner's part of the run's header line.
 * @example describeGradientWorkers(config) // 'learner: 2 gradient workers (train.dataParallel auto)'
 */
export function describeGradientWorkers(config: GradientWorkerConfig, cores = availableParallelism()): string {
  if (config.model.engine !== 'local') return `learner: model.engine ${config.model.engine}`;
  const { count, reason } = gradientWorkersOf(config, cores);
  const setting = `train.dataParallel ${config.train.dataParallel}`;
  if (count > 1) return `learner: ${count} gradient workers (${setting})`;
  return `learner: main thread (${setting}${reason === null ? '' : `: ${reason}`})`;
}

/** The micro-batch settings the packing reads (`algorithm.microBatchMultiple` and the model's shape). */
export type MicroBatchConfig = {
  readonly model: Pick<ResolvedConfig['model'], 'from' | 'dModel' | 'ffnHidden'>;
  readonly algorithm: Pick<ResolvedConfig['algorithm'], 'microBatchMultiple'>;
};

/**
 * How a mini-batch is cut into micro-batches (`src/learner/micro-batch-cuts.ts`): their count a
 * multiple of `algorithm.microBatchMultiple` (`auto`: {@link AUTO_GRADIENT_WORKERS_CAP} for
 * turnwise's own model, so that any count auto picks shares them equally; 1 for a pretrained
 * model, which has no gradient workers), and the work of a row of length L estimated as
 * L·(2·dModel + 1.5·ffnHidden + L): per layer a token's projections cost 4·dModel² + 3·dModel·ffnHidden
 * multiply-adds and its attention 2·dModel per key. Never the worker count, so the numbers stay
 * the same with any `train.dataParallel`.
 * @example microBatchCutsOf(resolveConfig(parseConfig({}))) // { microBatchMultiple: 4, attentionBreakEven: 386 }
 */
export function microBatchCutsOf(config: MicroBatchConfig): { readonly microBatchMultiple: number; readonly attentionBreakEven: number } {
  const own = config.model.from === null;
  const asked = config.algorithm.microBatchMultiple;
  return {
    microBatchMultiple: asked !== 'auto' ? asked : own ? AUTO_GRADIENT_WORKERS_CAP : 1,
    attentionBreakEven: own ? Math.round(2 * config.model.dModel + 1.5 * config.model.ffnHidden) : Number.POSITIVE_INFINITY,
  };
}
