/**
 * Episodes that end by length (`length`: the context had no room left for a reply), watched over a
 * run. A run where most episodes end that way learns from truncated contexts and its success rate
 * means little, yet it finishes as any other: a Qwen run at a 240-token context ended every
 * episode at turn 0 and reported "finished". This says so, loudly, at the step or evaluation where
 * it happens and in the run's result.
 */

/** Share of a step's (or an evaluation's) episodes ending by length from which the run is warned. */
export const MOST_EPISODES = 0.5;

/** What one warning names. */
export interface LengthWarning {
  readonly step: number;
  readonly message: string;
}

/**
 * Counts episodes ended by length per step and evaluation.
 * @example const lengths = new LengthOutcomes(512, 'model.maxContext'); lengths.observe('step', 3, 8, 7)?.message
 */
export class LengthOutcomes {
  private episodes = 0;
  private byLength = 0;
  private warned = 0;

  constructor(
    private readonly maxContext: number,
    private readonly field = 'model.maxContext',
  ) {}

  /** Records `ended` of `episodes` ended by length; a warning when they are most of them. */
  observe(kind: 'step' | 'evaluation', step: number, episodes: number, ended: number): LengthWarning | null {
    this.episodes += episodes;
    this.byLength += ended;
    if (episodes === 0 || ended / episodes < MOST_EPISODES) return null;
    this.warned++;
    const where = kind === 'step' ? `of step ${step}` : `of the evaluation at step ${step}`;
    return {
      step,
      message: `${ended} of ${episodes} episodes ${where} ended by length: the ${this.maxContext}-token context (${this.field}) left no room for a reply; the rewards and success rate of such a run mean little until it does (raise ${this.field}, lower sampling.maxActionTokens or keep fewer past turns: context.history)`,
    };
  }

  /** The run's warning for its result (null when most of no step's or evaluation's episodes ended by length). */
  summary(): string | null {
    if (this.warned === 0) return null;
    return `${this.byLength} of ${this.episodes} episodes ended by length (most of them in ${this.warned} step${this.warned === 1 ? '' : 's'} or evaluation${this.warned === 1 ? '' : 's'}): the context (${this.field} ${this.maxContext}) is too short for this environment's episodes`;
  }
}
