/**
 * Who sends what to whom (Sample Factory's `connect_components`, in one place).
 *
 * The actors in `src/actors/` know nothing of the Bus: they accept and emit typed events. This
 * file names every subject and lists every message flow top to bottom; the small adapters that
 * connect an actor to a `Bus` live in `src/runtime/wiring/`, one file per family:
 *
 * - `wiring/sampler.ts`: `serveSampler`, `remoteAct`, `announceWeights`, `releaseEpisodes`
 * - `wiring/env-session.ts`: `serveEnvSession`, `remoteEnvSession`
 * - `wiring/episode.ts`: `remoteEpisodeEffects` (env session + samplers)
 * - `wiring/learner.ts`: `serveLearner`, `remoteTrain`
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
 * `announceWeights`. test/e2e/message-flow.test.ts records a run's bus traffic and checks it
 * against {@link messageFlow}.
 */
import { InvalidArgumentError } from '../../core/errors.js';

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
  /** Publish: learner → every sampler, `{ version, weights }`. */
  weights: (runId: string) => `turnwise.${token('runId', runId)}.weights`,
  /** Request/reply: episode → env session, `reset(taskIndex)`. */
  envReset: (runId: string, sessionId: string) => `turnwise.${token('runId', runId)}.env.${token('sessionId', sessionId)}.reset`,
  /** Request/reply: episode → env session, `step(actionText)`. */
  envStep: (runId: string, sessionId: string) => `turnwise.${token('runId', runId)}.env.${token('sessionId', sessionId)}.step`,
  /** Request/reply: lead → env session, `close()`. */
  envClose: (runId: string, sessionId: string) => `turnwise.${token('runId', runId)}.env.${token('sessionId', sessionId)}.close`,
  /** Request/reply: coordinator → learner, `{ step, trajectories }` → `{ version, metrics }`. */
  learnerTrain: (runId: string) => `turnwise.${token('runId', runId)}.learner.train`,
  /** No actor publishes here today; NATS runs derive their env-lease subjects from it (`nats/env-leases.ts`). */
  events: (runId: string) => `turnwise.${token('runId', runId)}.events`,
  /** Request/reply: learner → episodes workers (queue group: one answers), "is any worker there?" → `{ pid }` (NATS runs). */
  episodesPing: (runId: string) => `turnwise.${token('runId', runId)}.episodes.ping`,
} as const;

/** One edge of the actor graph. */
export interface MessageFlow {
  readonly from: string;
  readonly to: string;
  /** The subject it travels on; null when it is an in-process hand-off, not a bus message. */
  readonly subject: keyof typeof subjects | null;
  readonly kind: 'request' | 'publish' | 'in-process';
  readonly message: string;
  /** `every run`: the in-process bus and NATS alike; `nats`: only when the run spans processes. */
  readonly runs: 'every run' | 'nats';
}

/**
 * The actor graph, top to bottom in the order a training step uses it. The architecture figure
 * (docs/architecture.md) is drawn from this list, and test/e2e/message-flow.test.ts checks its bus
 * flows against the messages a recorded run sends. In modes one-step-off and async the
 * asynchronous loop (`src/runtime/async/`) takes the coordinator's part, and publishes the weights.
 * @example for (const f of messageFlow) console.log(`${f.from} → ${f.to}: ${f.message}`);
 */
export const messageFlow: readonly MessageFlow[] = [
  // The coordinator asks for a rollout; its `rollout` effect reads the horizon and starts episode actors in-process.
  { from: 'coordinator', to: 'episode', subject: null, kind: 'in-process', message: 'start with { taskId, taskIndex, groupId, step, horizon, instruction }', runs: 'every run' },
  // Each episode resets its env session and gets the first observation.
  { from: 'episode', to: 'env-session', subject: 'envReset', kind: 'request', message: '{ taskIndex } → Observation', runs: 'every run' },
  // Each episode asks the samplers (queue group: one answers) for the next action.
  { from: 'episode', to: 'sampler', subject: 'act', kind: 'request', message: 'ActRequest → ActResult', runs: 'every run' },
  // Each episode sends the action text to its env session.
  { from: 'episode', to: 'env-session', subject: 'envStep', kind: 'request', message: '{ actionText } → StepResult', runs: 'every run' },
  // When an episode ends, the episode runner tells the samplers to free its per-episode KV cache.
  { from: 'episode runner', to: 'sampler', subject: 'samplerRelease', kind: 'publish', message: '{ episodeIds }', runs: 'every run' },
  // A finished episode's output is its Trajectory, collected for the step (and stored before training).
  { from: 'episode', to: 'coordinator', subject: null, kind: 'in-process', message: 'Trajectory', runs: 'every run' },
  // The coordinator hands the step's trajectories to the learner and waits for the new version.
  { from: 'coordinator', to: 'learner', subject: 'learnerTrain', kind: 'request', message: '{ step, trajectories } → { version, metrics }', runs: 'every run' },
  // The learner publishes the new weights; every sampler drains its batch, then loads them.
  { from: 'learner', to: 'sampler', subject: 'weights', kind: 'publish', message: '{ version, weights }', runs: 'every run' },
  // After each step the coordinator tells the horizon scheduler, which may move to its next stage.
  { from: 'coordinator', to: 'horizon', subject: null, kind: 'in-process', message: 'STEP_COMPLETED { step, metrics }', runs: 'every run' },
  // NATS runs: while a step's trajectories are awaited, the learner checks that an episodes worker is connected.
  { from: 'learner', to: 'episodes worker', subject: 'episodesPing', kind: 'request', message: '{} → { pid }', runs: 'nats' },
];
