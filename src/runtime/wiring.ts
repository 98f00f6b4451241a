/**
 * Who sends what to whom (Sample Factory's `connect_components`, in one place).
 *
 * The actors in `src/actors/` know nothing of the Bus: they accept and emit typed events. This
 * file names every subject, lists every message flow top to bottom, and holds the small adapters
 * that connect an actor to a {@link Bus}. Only the `Bus` interface is used, so the same actors run
 * on the memory bus and on NATS with nothing else changed.
 *
 * Assembling a run (the lead's code): create the bus; start one sampler actor and
 * `serveSampler(bus, runId, sampler)`; per env instance start an env-session actor and
 * `serveEnvSession(bus, runId, sessionId, session)`; the coordinator's `rollout` effect reads the
 * horizon actor's snapshot and runs episode actors whose effects are
 * `remoteEpisodeEffects(bus, runId, sessionId, …)`; the learner's `publishWeights` effect calls
 * `announceWeights`; `forwardEmitted` copies horizon / coordinator events onto `subjects.events`.
 */
import { TurnwiseError } from '../core/errors.js';
import { InvalidArgumentError, InvalidMessageError } from '../core/errors.js';
import type { Observation, StepResult, Trajectory } from '../core/types.js';
import type { ActRequest, ActResult } from '../models/policy.js';
import type { EnvSessionAccepts, EnvSessionEmits } from '../actors/env-session.js';
import type { EpisodeActRequest, EpisodeEffects } from '../actors/episode.js';
import type { LearnerAccepts, LearnerEmits, Metrics } from '../actors/learner.js';
import type { SamplerAccepts, SamplerEmits } from '../actors/sampler.js';
import type { Bus, Subscription } from './bus.js';

// ---------------------------------------------------------------------------------------------
// Subjects. Every subject starts with `turnwise.<runId>.` so that runs sharing a NATS server
// never hear each other. `runId` and `sessionId` must be single subject tokens.
// ---------------------------------------------------------------------------------------------

const TOKEN = /^[A-Za-z0-9_-]+$/;

function token(property: string, value: string): string {
  if (!TOKEN.test(value)) throw InvalidArgumentError.format(property, `expected letters, digits, '_' or '-' (one subject token), got ${JSON.stringify(value)}`);
  return value;
}

/**
 * Subject names, one function per message stream.
 * @example subjects.act('run1') // 'turnwise.run1.sampler.act'
 */
export const subjects = {
  /** Request/reply: episode → sampler, one act request (queue group `samplers`). */
  act: (runId: string) => `turnwise.${token('runId', runId)}.sampler.act`,
  /** Publish: episode runner → every sampler, `{ episodeIds }` that ended (frees their KV caches). */
  samplerRelease: (runId: string) => `turnwise.${token('runId', runId)}.sampler.release`,
  /** Publish: coordinator/lead → every sampler, `PAUSE` / `RESUME` (backpressure). */
  samplerControl: (runId: string) => `turnwise.${token('runId', runId)}.sampler.control`,
  /** Publish: learner → every sampler, `{ version, weights }`. */
  weights: (runId: string) => `turnwise.${token('runId', runId)}.weights`,
  /** Request/reply: episode → env session, `reset(taskIndex)`. */
  envReset: (runId: string, sessionId: string) => `turnwise.${token('runId', runId)}.env.${token('sessionId', sessionId)}.reset`,
  /** Request/reply: episode → env session, `step(actionText)`. */
  envStep: (runId: string, sessionId: string) => `turnwise.${token('runId', runId)}.env.${token('sessionId', sessionId)}.step`,
  /** Request/reply: lead → env session, `close()`. */
  envClose: (runId: string, sessionId: string) => `turnwise.${token('runId', runId)}.env.${token('sessionId', sessionId)}.close`,
  /** Publish: episode → run store / viewer, each finished Trajectory. */
  trajectories: (runId: string) => `turnwise.${token('runId', runId)}.trajectories`,
  /** Publish: horizon → anyone who caches the horizon, each `STAGE_CHANGED`. */
  horizon: (runId: string) => `turnwise.${token('runId', runId)}.horizon`,
  /** Request/reply: coordinator → learner, `{ step, trajectories }` → `{ version, metrics }`. */
  learnerTrain: (runId: string) => `turnwise.${token('runId', runId)}.learner.train`,
  /** Publish: every actor → run log / UI, `{ source, event }`. */
  events: (runId: string) => `turnwise.${token('runId', runId)}.events`,
} as const;

/** One edge of the actor graph. */
export interface MessageFlow {
  readonly from: string;
  readonly to: string;
  readonly subject: keyof typeof subjects;
  readonly kind: 'request' | 'publish' | 'in-process';
  readonly message: string;
}

/**
 * The actor graph, top to bottom in the order a training step uses it. The README figure and the
 * UI are drawn from this list.
 * @example for (const f of messageFlow) console.log(`${f.from} → ${f.to}: ${f.message}`);
 */
export const messageFlow: readonly MessageFlow[] = [
  // The coordinator asks for a rollout; its `rollout` effect reads the horizon and starts episode actors in-process.
  { from: 'coordinator', to: 'episode', subject: 'events', kind: 'in-process', message: 'spawn with { taskId, taskIndex, groupId, step, horizon, instruction }' },
  // Each episode resets its env session and gets the first observation.
  { from: 'episode', to: 'env-session', subject: 'envReset', kind: 'request', message: '{ taskIndex } → Observation' },
  // Each episode asks the samplers (queue group: one answers) for the next action.
  { from: 'episode', to: 'sampler', subject: 'act', kind: 'request', message: 'ActRequest → ActResult' },
  // Ended episodes are announced so that samplers free their per-episode KV caches.
  { from: 'episode', to: 'sampler', subject: 'samplerRelease', kind: 'publish', message: '{ episodeIds }' },
  // Each episode sends the action text to its env session.
  { from: 'episode', to: 'env-session', subject: 'envStep', kind: 'request', message: '{ actionText } → StepResult' },
  // Each finished episode publishes its Trajectory for the run store and the viewer.
  { from: 'episode', to: 'store', subject: 'trajectories', kind: 'publish', message: 'Trajectory' },
  // The coordinator hands the step's trajectories to the learner and waits for the new version.
  { from: 'coordinator', to: 'learner', subject: 'learnerTrain', kind: 'request', message: '{ step, trajectories } → { version, metrics }' },
  // The learner publishes the new weights; every sampler drains its batch, then loads them.
  { from: 'learner', to: 'sampler', subject: 'weights', kind: 'publish', message: '{ version, weights }' },
  // The coordinator (or a full queue) throttles samplers.
  { from: 'coordinator', to: 'sampler', subject: 'samplerControl', kind: 'publish', message: "{ type: 'PAUSE' | 'RESUME' }" },
  // After each step the coordinator tells the horizon actor; a stage change is announced.
  { from: 'horizon', to: 'everyone', subject: 'horizon', kind: 'publish', message: 'STAGE_CHANGED { from, to, horizon, reason, step }' },
  // Every actor's emitted events go to the run log / UI.
  { from: 'all actors', to: 'run log', subject: 'events', kind: 'publish', message: '{ source, event }' },
];

// ---------------------------------------------------------------------------------------------
// Actor ports: the two methods of an xstate actor the adapters use (an `Actor` fits as is).
// ---------------------------------------------------------------------------------------------

/**
 * What an adapter needs from a running actor: send it events, listen to what it emits.
 * @example const port: ActorPort<SamplerAccepts, SamplerEmits> = createActor(samplerLogic, { input }).start();
 */
export interface ActorPort<A extends { type: string }, E extends { type: string }> {
  send(event: A): void;
  on(type: E['type'], handler: (event: E) => void): { unsubscribe(): void };
}

/** Undo what a `serve*` adapter set up. */
export interface Served {
  close(): void;
}

/** Sends `event` and resolves with the first emitted event whose type is in `answers`. */
function call<A extends { type: string }, E extends { type: string }>(port: ActorPort<A, E>, event: A, answers: readonly E['type'][], accept: (e: E) => boolean = () => true): Promise<E> {
  return new Promise<E>((resolve) => {
    const subs: { unsubscribe(): void }[] = [];
    const done = (e: E) => {
      if (!accept(e)) return;
      for (const s of subs) s.unsubscribe();
      resolve(e);
    };
    // Listen before sending: some answers are emitted synchronously inside `send`.
    for (const type of answers) subs.push(port.on(type, done));
    port.send(event);
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

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
  const request: ActRequest = { contextTokens: payload.contextTokens, actionChoices: (choices ?? null) as readonly Int32Array[] | null };
  return {
    ...request,
    ...(seed === undefined ? {} : { seed: seed as number }),
    ...(episodeId === undefined ? {} : { episodeId }),
    ...(lastTurn === undefined ? {} : { lastTurn }),
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
  return { ...(reply as unknown as ActResult), constraint: (reply.constraint ?? null) as ActResult['constraint'] };
}

// ---------------------------------------------------------------------------------------------
// Sampler: episode → sampler (act), learner → sampler (weights), coordinator → sampler (control).
// ---------------------------------------------------------------------------------------------

/**
 * Serves act requests from the bus with a sampler actor (queue group `samplers`, so several
 * samplers share the load), and feeds it weights and PAUSE/RESUME from the bus.
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
    bus.subscribe(subjects.samplerControl(runId), (payload) => {
      const type = isObject(payload) ? payload.type : undefined;
      if (type !== 'PAUSE' && type !== 'RESUME') throw new InvalidMessageError(subjects.samplerControl(runId), `expected { type: 'PAUSE' | 'RESUME' }, got ${JSON.stringify(type)}`);
      sampler.send({ type });
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

/**
 * Backpressure: pause or resume every sampler of the run.
 * @example controlSamplers(bus, 'run1', 'PAUSE');
 */
export function controlSamplers(bus: Bus, runId: string, type: 'PAUSE' | 'RESUME'): void {
  bus.publish(subjects.samplerControl(runId), { type });
}

// ---------------------------------------------------------------------------------------------
// Env session: episode → env session (reset, step), lead → env session (close).
// ---------------------------------------------------------------------------------------------

/**
 * Serves reset/step/close for one env session over the bus. Calls are answered one at a time in
 * arrival order, as the session serves one call at a time.
 * @example const served = serveEnvSession(bus, 'run1', 'env-0', sessionActor);
 */
export function serveEnvSession(bus: Bus, runId: string, sessionId: string, session: ActorPort<EnvSessionAccepts, EnvSessionEmits>): Served {
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  const failure = (e: EnvSessionEmits): Error =>
    new TurnwiseError(e.type === 'SESSION_FAILED' ? e.error : e.type === 'REJECTED' ? `${e.request} rejected: ${e.reason}` : `unexpected ${e.type}`);
  const resetSubject = subjects.envReset(runId, sessionId);
  const stepSubject = subjects.envStep(runId, sessionId);
  const subs: Subscription[] = [
    bus.subscribe(resetSubject, (payload) => {
      if (!isObject(payload) || !Number.isInteger(payload.taskIndex)) throw new InvalidMessageError(resetSubject, 'expected { taskIndex: integer }');
      const taskIndex = payload.taskIndex as number;
      return serial(async () => {
        const answer = await call(session, { type: 'RESET', taskIndex }, ['RESET_DONE', 'SESSION_FAILED', 'REJECTED']);
        if (answer.type === 'RESET_DONE') return answer.observation;
        throw failure(answer);
      });
    }),
    bus.subscribe(stepSubject, (payload) => {
      if (!isObject(payload) || typeof payload.actionText !== 'string') throw new InvalidMessageError(stepSubject, 'expected { actionText: string }');
      const actionText = payload.actionText;
      return serial(async () => {
        const answer = await call(session, { type: 'STEP', actionText }, ['STEP_DONE', 'SESSION_FAILED', 'REJECTED']);
        if (answer.type === 'STEP_DONE') return answer.result;
        throw failure(answer);
      });
    }),
    bus.subscribe(subjects.envClose(runId, sessionId), () => serial(async () => {
      await call(session, { type: 'CLOSE' }, ['CLOSED']);
      return null;
    })),
  ];
  return { close: () => { for (const s of subs) s.unsubscribe(); } };
}

/** Client side of one env session over the bus. */
export interface RemoteEnvSession {
  reset(taskIndex: number): Promise<Observation>;
  step(actionText: string): Promise<StepResult>;
  close(): Promise<void>;
}

/**
 * Client side of an env session: what an episode's `reset` / `step` effects call.
 * @example const env = remoteEnvSession(bus, 'run1', 'env-0', 30_000); const obs = await env.reset(12);
 */
export function remoteEnvSession(bus: Bus, runId: string, sessionId: string, timeoutMs: number): RemoteEnvSession {
  const resetSubject = subjects.envReset(runId, sessionId);
  const stepSubject = subjects.envStep(runId, sessionId);
  return {
    async reset(taskIndex: number): Promise<Observation> {
      const reply = await bus.request(resetSubject, { taskIndex }, { timeoutMs });
      if (!isObject(reply) || typeof reply.text !== 'string') throw new InvalidMessageError(resetSubject, 'expected an Observation { text }');
      return reply as unknown as Observation;
    },
    async step(actionText: string): Promise<StepResult> {
      const reply = await bus.request(stepSubject, { actionText }, { timeoutMs });
      if (!isObject(reply) || !isObject(reply.observation) || typeof reply.reward !== 'number' || typeof reply.done !== 'boolean') {
        throw new InvalidMessageError(stepSubject, 'expected a StepResult { observation, reward, done }');
      }
      return reply as unknown as StepResult;
    },
    async close(): Promise<void> {
      await bus.request(subjects.envClose(runId, sessionId), {}, { timeoutMs });
    },
  };
}

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

// ---------------------------------------------------------------------------------------------
// Learner: coordinator → learner (train).
// ---------------------------------------------------------------------------------------------

/**
 * Serves train requests with a learner actor; replies when it emits `TRAINED` for that step.
 * @example const served = serveLearner(bus, 'run1', learnerActor);
 */
export function serveLearner(bus: Bus, runId: string, learner: ActorPort<LearnerAccepts, LearnerEmits>): Served {
  const subject = subjects.learnerTrain(runId);
  const sub = bus.subscribe(subject, async (payload) => {
    if (!isObject(payload) || !Number.isInteger(payload.step) || !Array.isArray(payload.trajectories)) {
      throw new InvalidMessageError(subject, 'expected { step: integer, trajectories: Trajectory[] }');
    }
    const step = payload.step as number;
    const answer = await call(
      learner,
      { type: 'TRAIN', step, trajectories: payload.trajectories as Trajectory[] },
      ['TRAINED', 'TRAIN_FAILED'],
      (e) => e.step === step,
    );
    if (answer.type === 'TRAIN_FAILED') throw new TurnwiseError(answer.error);
    return { version: answer.version, metrics: answer.metrics };
  });
  return { close: () => sub.unsubscribe() };
}

/**
 * The coordinator's `train` effect over the bus.
 * @example const train = remoteTrain(bus, 'run1', 600_000); const { metrics } = await train(0, trajectories);
 */
export function remoteTrain(bus: Bus, runId: string, timeoutMs: number): (step: number, trajectories: readonly Trajectory[]) => Promise<{ version: number; metrics: Metrics }> {
  const subject = subjects.learnerTrain(runId);
  return async (step, trajectories) => {
    const reply = await bus.request(subject, { step, trajectories }, { timeoutMs });
    if (!isObject(reply) || typeof reply.version !== 'number' || !isObject(reply.metrics)) throw new InvalidMessageError(subject, 'expected { version, metrics }');
    return { version: reply.version, metrics: reply.metrics as Metrics };
  };
}

// ---------------------------------------------------------------------------------------------
// Events: horizon → everyone (STAGE_CHANGED), every actor → run log.
// ---------------------------------------------------------------------------------------------

/**
 * Copies an actor's emitted events of the given types onto `subjects.events` as `{ source, event }`
 * (and onto `extraSubject` when given, e.g. `subjects.horizon(runId)`).
 * @example forwardEmitted(bus, 'run1', 'horizon', horizonActor, ['STAGE_CHANGED'], subjects.horizon('run1'));
 */
export function forwardEmitted<E extends { type: string }>(
  bus: Bus,
  runId: string,
  source: string,
  port: Pick<ActorPort<{ type: string }, E>, 'on'>,
  types: readonly E['type'][],
  extraSubject?: string,
): Served {
  const eventsSubject = subjects.events(runId);
  const listeners = types.map((type) =>
    port.on(type, (event) => {
      bus.publish(eventsSubject, { source, event });
      if (extraSubject !== undefined) bus.publish(extraSubject, event);
    }),
  );
  return { close: () => { for (const l of listeners) l.unsubscribe(); } };
}
