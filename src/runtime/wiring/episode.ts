/**
 * Episode adapters: an episode's effects reach its env session and the samplers over the bus, and
 * a finished episode publishes its trajectory (episode → store). Subjects: `src/runtime/wiring.ts`.
 */
import type { Trajectory } from '../../core/types.js';
import type { EpisodeActRequest, EpisodeEffects } from '../../actors/episode.js';
import type { ActRequest } from '../../core/policy.js';
import type { Bus } from '../bus.js';
import { subjects } from '../wiring.js';
import { remoteEnvSession } from './env-session.js';
import { remoteAct } from './sampler.js';

/** How the lead turns an episode's state into a sampler request and the sampled ids into text. */
export interface ActCodec {
  /** Builds the context (`buildContext`) and action choices (`encodeActionChoices`). */
  toActRequest(request: EpisodeActRequest): ActRequest;
  /** Decodes sampled ids to the action text sent to the environment. */
  decode(tokens: Int32Array): string;
}

/**
 * Episode effects that reach the env session and the samplers over the bus.
 * @example const logic = withEpisodeEffects(remoteEpisodeEffects(bus, 'run1', 'env-0', codec, { envTimeoutMs: 30_000, actTimeoutMs: 60_000 }));
 */
export function remoteEpisodeEffects(
  bus: Bus,
  runId: string,
  sessionId: string,
  codec: ActCodec,
  timeouts: { readonly envTimeoutMs: number; readonly actTimeoutMs: number },
): EpisodeEffects {
  const env = remoteEnvSession(bus, runId, sessionId, timeouts.envTimeoutMs);
  const act = remoteAct(bus, runId, timeouts.actTimeoutMs);
  return {
    reset: (taskIndex) => env.reset(taskIndex),
    step: (actionText) => env.step(actionText),
    async act(request) {
      const actRequest = codec.toActRequest(request);
      const result = await act(actRequest);
      return { actText: codec.decode(result.tokens), result, promptTokens: actRequest.contextTokens };
    },
  };
}

/**
 * Episode → store: publish a finished trajectory.
 * @example publishTrajectory(bus, 'run1', trajectory);
 */
export function publishTrajectory(bus: Bus, runId: string, trajectory: Trajectory): void {
  bus.publish(subjects.trajectories(runId), trajectory);
}
