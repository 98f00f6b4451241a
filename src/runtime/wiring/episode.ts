/**
 * Episode adapters: an episode's effects reach its env session and the samplers over the bus.
 * Subjects: `src/runtime/wiring/message-flow.ts`.
 */
import type { EpisodeActRequest, EpisodeEffects } from '../../actors/episode.js';
import type { ActRequest } from '../../core/policy.js';
import type { Bus } from '../../bus/bus.js';
import { remoteEnvSession } from './env-session.js';
import { remoteAct } from './sampler.js';

/** How a run turns an episode's state into a sampler request and the sampled ids into text. */
export interface ActCodec {
  /**
   * Builds the context and action choices (the run's `PolicyText`); `exhausted` when the context
   * has no room for a reply (the episode then ends truncated by length, nothing is sampled).
   */
  toActRequest(request: EpisodeActRequest): ActRequest & { readonly exhausted?: boolean };
  /** Decodes sampled ids to the action text sent to the environment. */
  decode(tokens: Int32Array): string;
}

/** The result of a turn that sampled nothing (no room left): never recorded as a turn. */
const NOTHING_SAMPLED = { tokens: new Int32Array(0), logprobs: new Float32Array(0), lossMask: new Uint8Array(0), constraint: null, policyVersion: -1 } as const;

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
      const { exhausted, ...actRequest } = codec.toActRequest(request);
      if (exhausted === true) return { actText: '', result: NOTHING_SAMPLED, promptTokens: actRequest.contextTokens, exhausted: true };
      const result = await act(actRequest);
      return { actText: codec.decode(result.tokens), result, promptTokens: actRequest.contextTokens };
    },
  };
}
