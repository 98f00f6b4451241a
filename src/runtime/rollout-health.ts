/**
 * When every episode of a batch ended in `error`, the environment (or the policy endpoint) is down,
 * not unlucky: each episode's requests had already used their retry budget (the AgentGym client's
 * retries, the OpenAI client's `max-retries`, an episodes worker's redeliveries). Going on would
 * "finish" a run at success 0 on episodes nobody played, so the batch fails with the first error.
 * A batch with some errors goes on: they are counted (`rollout/errorRate`) and recorded.
 */
import { TurnwiseError } from '../core/errors.js';
import type { Trajectory } from '../core/types.js';

/**
 * Every episode of a batch ended in `error`.
 * @example new AllEpisodesFailedError('step 3', 16, 'http://127.0.0.1:36002/reset: connect ECONNREFUSED (4 attempts)')
 */
export class AllEpisodesFailedError extends TurnwiseError {
  constructor(
    readonly what: string,
    readonly episodes: number,
    readonly firstError: string,
  ) {
    super(`every episode of ${what} ended in error (${episodes} of ${episodes}); the first: ${firstError}`);
  }
}

/**
 * Throws {@link AllEpisodesFailedError} when `trajectories` is non-empty and all of them ended in `error`.
 * @example failIfAllEpisodesFailed('step 3', trajectories);
 */
export function failIfAllEpisodesFailed(what: string, trajectories: readonly Trajectory[]): void {
  if (trajectories.length === 0 || trajectories.some((t) => t.outcome !== 'error')) return;
  throw new AllEpisodesFailedError(what, trajectories.length, trajectories[0]?.error ?? 'no error message');
}
