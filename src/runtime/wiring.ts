/**
 * Who sends what to whom (Sample Factory's `connect_components`, in one place).
 *
 * The actors in `src/actors/` know nothing of the Bus: they accept and emit typed events. This
 * file names every subject and lists every message flow top to bottom; the small adapters that
 * connect an actor to a `Bus` live in `src/runtime/wiring/`, one file per family:
 *
 * - `wiring/sampler.ts`: `serveSampler`, `remoteAct`, `announceWeights`, `releaseEpisodes`, `controlSamplers`
 * - `wiring/env-session.ts`: `serveEnvSession`, `remoteEnvSession`
 * - `wiring/episode.ts`: `remoteEpisodeEffects` (env session + samplers), `publishTrajectory`
 * - `wiring/learner.ts`: `serveLearner`, `remoteTrain`
 * - `wiring/events.ts`: `forwardEmitted`
 * - `wiring/ports.ts`: `ActorPort`, `Served` and the helpers they share
 *
 * Only the `Bus` interface is used, so the same actors run on the memory bus and on NATS with
 * nothing else changed.
 *
 * Assembling a run (`src/runtime/train/actors.ts` does this): create the bus; start one sampler actor and
 * `serveSampler(bus, runId, sampler)`; per env instance start an env-session actor and
 * `serveEnvSession(bus, runId, sessionId, session)`; the coordinator's `rollout` effect reads the
 * horizon actor's snapshot and runs episode actors whose effects are
 * `remoteEpisodeEffects(bus, runId, sessionId, …)`; the learner's `publishWeights` effect calls
 * `announceWeights`; `forwardEmitted` copies horizon / coordinator events onto `subjects.events`.
 */
import { InvalidArgumentError } from '../core/errors.js';

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
  /** Request/reply: learner → episodes workers (queue group: one answers), "is any worker there?" → `{ pid }` (NATS runs). */
  episodesPing: (runId: string) => `turnwise.${token('runId', runId)}.episodes.ping`,
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
  // NATS runs: while a step's trajectories are awaited, the learner checks that an episodes worker is connected.
  { from: 'learner', to: 'episodes worker', subject: 'episodesPing', kind: 'request', message: '{} → { pid }' },
  // Every actor's emitted events go to the run log / UI.
  { from: 'all actors', to: 'run log', subject: 'events', kind: 'publish', message: '{ source, event }' },
];
