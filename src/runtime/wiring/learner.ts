/**
 * Learner adapters: coordinator → learner (train). Subjects: `src/runtime/wiring/message-flow.ts`.
 */
import { InvalidMessageError, TurnwiseError } from '../../core/errors.js';
import type { Trajectory } from '../../core/types.js';
import type { LearnerAccepts, LearnerEmits, Metrics } from '../../actors/learner.js';
import type { Bus } from '../../bus/bus.js';
import { subjects } from './message-flow.js';
import { type ActorPort, call, isObject, type Served } from './ports.js';

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
