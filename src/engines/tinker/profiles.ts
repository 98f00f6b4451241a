/**
 * What a Tinker server can do that its API does not tell: which losses it runs, how it reduces
 * per-token losses into a step's gradient, and whether it clips gradients. Named profiles give
 * the known servers' answers; each field can be overridden.
 */
import type { EngineLossName, LossReduction } from '../engine.js';

/** Behaviour of one kind of server. */
export interface TinkerServerProfile {
  readonly losses: readonly EngineLossName[];
  readonly reduction: LossReduction;
  /** Whether `optim_step` honours `grad_clip_norm` (else a non-zero clip is refused). */
  readonly gradClip: boolean;
}

/** The servers turnwise knows, by the name a config gives. */
export type TinkerServerKind = 'tinker' | 'skyrl';

/**
 * - `tinker`: Thinking Machines' hosted service as its documentation states it: losses summed over
 *   tokens and data, `grad_clip_norm` in `AdamParams`, five losses.
 * - `skyrl`: SkyRL tx (JAX backend, as recorded): each sequence's loss divided by its weight sum,
 *   then the mean over the step's sequences; no `grad_clip_norm` field (it would be ignored);
 *   `dro` does not exist there (and `gspo`, `ppo_critic`, `dppo` are not turnwise losses).
 */
export const TINKER_SERVER_PROFILES: Readonly<Record<TinkerServerKind, TinkerServerProfile>> = {
  tinker: { losses: ['cross_entropy', 'importance_sampling', 'ppo', 'cispo', 'dro'], reduction: 'sum', gradClip: true },
  skyrl: { losses: ['cross_entropy', 'importance_sampling', 'ppo', 'cispo'], reduction: 'sequence-mean', gradClip: false },
};
