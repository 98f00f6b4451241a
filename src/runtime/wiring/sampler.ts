/**
 * Sampler adapters: episode → sampler (act), learner → sampler (weights), episode runner → sampler
 * (release). Subjects: `src/runtime/wiring/message-flow.ts`.
 */
import { InvalidMessageError, TurnwiseError } from '../../core/errors.js';
import type { SamplerAccepts, SamplerEmits } from '../../actors/sampler.js';
import type { ActRequest, ActResult } from '../../core/policy.js';
import type { Bus, Subscription } from '../../bus/bus.js';
import { subjects } from './message-flow.js';
import { type ActorPort, isObject, type Served } from './ports.js';

function parseActRequest(subject: string, payload: unknown): ActRequest {
  if (!isObject(payload) || !(payload.contextTokens instanceof Int32Array)) {
    throw new InvalidMessageError(subject, 'expected { contextTokens: Int32Array, actionChoices: Int32Array[] | null }');
  }
  const choices = payload.actionChoices;
  if (choices !== null && choices !== undefined && !(Array.isArray(choices) && choices.every((c) => c instanceof Int32Array))) {
    throw new InvalidMessageError(subject, "'actionChoices' must be an array of Int32Array or null");
  }
  const seed = payload.seed;
  if (seed !== undefined && !Number.isInteger(seed)) throw new InvalidMessageError(subject, "'seed' must be an integer when present");
  const { episodeId, lastTurn } = payload;
  if (episodeId !== undefined && typeof episodeId !== 'string') throw new InvalidMessageError(subject, "'episodeId' must be a string when present");
  if (lastTurn !== undefined && typeof lastTurn !== 'boolean') throw new InvalidMessageError(subject, "'lastTurn' must be a boolean when present");
  const { stopTokenIds, maxNewTokens } = payload;
  if (stopTokenIds !== undefined && !(Array.isArray(stopTokenIds) && stopTokenIds.every((id) => Number.isInteger(id) && id >= 0))) {
    throw new InvalidMessageError(subject, "'stopTokenIds' must be an array of token ids when present");
  }
  if (maxNewTokens !== undefined && !(Number.isInteger(maxNewTokens) && (maxNewTokens as number) >= 1)) {
    throw new InvalidMessageError(subject, "'maxNewTokens' must be an integer >= 1 when present");
  }
  const request: ActRequest = { contextTokens: payload.contextTokens, actionChoices: (choices ?? null) as readonly Int32Array[] | null };
  return {
    ...request,
    ...(seed === undefined ? {} : { seed: seed as number }),
    ...(episodeId === undefined ? {} : { episodeId }),
    ...(lastTurn === undefined ? {} : { lastTurn }),
    ...(stopTokenIds === undefined ? {} : { stopTokenIds: stopTokenIds as number[] }),
    ...(maxNewTokens === undefined ? {} : { maxNewTokens: maxNewTokens as number }),
  };
}

function parseActResult(subject: string, reply: unknown): ActResult {
  if (
    !isObject(reply) ||
    !(reply.tokens instanceof Int32Array) ||
    !(reply.logprobs instanceof Float32Array) ||
    !(reply.lossMask instanceof Uint8Array) ||
    typeof reply.policyVersion !== 'number'
  ) {
    throw new InvalidMessageError(subject, 'expected an ActResult { tokens: Int32Array, logprobs: Float32Array, lossMask: Uint8Array, constraint, policyVersion }');
  }
  if (reply.entropies !== undefined && !(reply.entropies instanceof Float32Array && reply.entropies.length === reply.tokens.length)) {
    throw new InvalidMessageError(subject, "'entropies' must be a Float32Array with one entry per token when present");
  }
  return { ...(reply as unknown as ActResult), constraint: (reply.constraint ?? null) as ActResult['constraint'] };
}

/**
 * Serves act requests from the bus with a sampler actor (queue group `samplers`, so several
 * samplers share the load), and feeds it weights and episode releases from the bus.
 * @example const served = serveSampler(bus, 'run1', samplerActor); // later: served.close()
 */
export function serveSampler(bus: Bus, runId: string, sampler: ActorPort<SamplerAccepts, SamplerEmits>): Served {
  const waiting = new Map<string, { resolve: (r: ActResult) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  const listeners = [
    sampler.on('ACT_DONE', (e) => {
      if (e.type !== 'ACT_DONE') return;
      waiting.get(e.requestId)?.resolve(e.result);
      waiting.delete(e.requestId);
    }),
    sampler.on('ACT_FAILED', (e) => {
      if (e.type !== 'ACT_FAILED') return;
      waiting.get(e.requestId)?.reject(new TurnwiseError(e.error));
      waiting.delete(e.requestId);
    }),
  ];
  const actSubject = subjects.act(runId);
  const subs: Subscription[] = [
    bus.subscribe(
      actSubject,
      (payload) => {
        const request = parseActRequest(actSubject, payload);
        const requestId = `${runId}-${nextId++}`;
        return new Promise<ActResult>((resolve, reject) => {
          waiting.set(requestId, { resolve, reject });
          sampler.send({ type: 'ACT', requestId, request });
        });
      },
      { queue: 'samplers' },
    ),
    bus.subscribe(subjects.weights(runId), (payload) => {
      if (!isObject(payload) || typeof payload.version !== 'number') throw new InvalidMessageError(subjects.weights(runId), 'expected { version: number, weights }');
      sampler.send({ type: 'LOAD_WEIGHTS', version: payload.version, weights: payload.weights });
    }),
    bus.subscribe(subjects.samplerRelease(runId), (payload) => {
      const ids = isObject(payload) ? payload.episodeIds : undefined;
      if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
        throw new InvalidMessageError(subjects.samplerRelease(runId), 'expected { episodeIds: string[] }');
      }
      sampler.send({ type: 'RELEASE', episodeIds: ids as string[] });
    }),
  ];
  return {
    close() {
      for (const s of subs) s.unsubscribe();
      for (const l of listeners) l.unsubscribe();
      for (const w of waiting.values()) w.reject(new TurnwiseError('sampler adapter closed'));
      waiting.clear();
    },
  };
}

/**
 * The function an episode's `act` effect calls to reach the samplers over the bus.
 * @example const act = remoteAct(bus, 'run1', 60_000); const result = await act(request);
 */
export function remoteAct(bus: Bus, runId: string, timeoutMs: number): (request: ActRequest) => Promise<ActResult> {
  const subject = subjects.act(runId);
  return async (request) => parseActResult(subject, await bus.request(subject, request, { timeoutMs }));
}

/**
 * Learner → samplers: new weights (samplers drain their batch, then load).
 * @example announceWeights(bus, 'run1', 3, packedWeights);
 */
export function announceWeights(bus: Bus, runId: string, version: number, weights: unknown): void {
  bus.publish(subjects.weights(runId), { version, weights });
}

/**
 * Episodes ended: every sampler frees what it keeps for them (per-episode KV caches).
 * @example releaseEpisodes(bus, 'run1', ['step3/babyai_12/0']);
 */
export function releaseEpisodes(bus: Bus, runId: string, episodeIds: readonly string[]): void {
  bus.publish(subjects.samplerRelease(runId), { episodeIds });
}
