/**
 * Trajectories over JetStream: episodes workers publish each finished trajectory to the run's
 * trajectory stream; the learner collects a step's trajectories and acknowledges each one only
 * after it is committed to the run store.
 *
 * Nothing lost, nothing counted twice:
 * - a trajectory id is published with `Nats-Msg-Id`, so JetStream drops a re-sent copy (a worker
 *   that died between publishing and acknowledging its plan);
 * - the run store records a trajectory id once, so a copy that still gets through is a duplicate;
 * - a step's collection replays the step's subject from the start of the stream, so a learner
 *   restarted from its checkpoint gets back every trajectory of the step, acknowledged or not,
 *   with all its fields (the store keeps no decode constraints), and only the missing plans are run.
 */
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { InvalidMessageError } from '../../core/errors.js';
import { faultPoint } from '../../core/fault-point.js';
import type { Trajectory } from '../../core/types.js';
import { checkTrajectory as checkRecord } from '../../store/records.js';
import type { RunStore } from '../../store/run-store.js';
import { decode, encode } from '../../bus/codec.js';
import type { RunInfra } from './run-infra.js';

/**
 * Publishes one trajectory and waits for JetStream's acknowledgement (it is then durable).
 * @example await publishTrajectoryDurably(infra, trajectory);
 */
export async function publishTrajectoryDurably(infra: RunInfra, trajectory: Trajectory): Promise<{ duplicate: boolean }> {
  const subject = infra.names.trajSubject(trajectory.step);
  const ack = await infra.js.publish(subject, encode(trajectory, subject), { msgID: trajectory.trajectoryId });
  return { duplicate: ack.duplicate };
}

/**
 * The store's own checks on a decoded message, plus its step: a message the store would refuse is
 * refused (and terminated) as a message, instead of failing the store call and with it the whole
 * collection. (The store checks again when it records: a few field tests per turn.)
 */
function checkTrajectory(subject: string, value: unknown, step: number): Trajectory {
  try {
    checkRecord(value as Trajectory, 'trajectory');
  } catch (error) {
    throw new InvalidMessageError(subject, (error as Error).message);
  }
  const t = value as Trajectory;
  if (t.step !== step) throw new InvalidMessageError(subject, `expected a trajectory of step ${step}, got step ${t.step}`);
  return t;
}

/** What a step's collection saw. */
export interface CollectStats {
  /** Trajectories of the step already in the stream when collection began (a restart's replay). */
  readonly replayed: number;
  /** Stream messages whose trajectory id the store already held. */
  readonly duplicates: number;
  /** Messages refused (undecodable or not a trajectory of the step). */
  readonly rejected: number;
}

export interface CollectOptions {
  readonly infra: RunInfra;
  readonly store: RunStore;
  readonly storeRunId: string;
  readonly step: number;
  /** Trajectory ids the step needs, in plan order. */
  readonly expected: readonly string[];
  /** Called once the stream's existing messages of the step were read, with the ids still missing. */
  readonly onReplayed: (missing: readonly string[]) => Promise<void>;
  readonly log?: (line: string) => void;
  /** Called after each new trajectory of the step is committed (progress). */
  readonly onStored?: () => void;
  /** Aborting ends the collection: `collectStep` rejects with the signal's reason (e.g. no worker left). */
  readonly signal?: AbortSignal;
}

/**
 * Collects every expected trajectory of a step from the stream, committing each to the store
 * before acknowledging it. Resolves with them in `expected` order.
 * @example const { trajectories } = await collectStep({ infra, store, storeRunId, step, expected, onReplayed: publishPlans });
 */
export async function collectStep(options: CollectOptions): Promise<{ trajectories: Trajectory[]; stats: CollectStats }> {
  const { infra, store, storeRunId, step, expected } = options;
  const log = options.log ?? ((line: string) => console.error(`[turnwise nats] ${line}`));
  const { jsm, js, names } = infra;
  const name = `learner-s${step}`;
  const subject = names.trajSubject(step);
  // A consumer left by a crashed learner is replaced: the replay starts from the stream's first message.
  await jsm.consumers.delete(names.trajStream, name).catch(() => false);
  await jsm.consumers.add(names.trajStream, {
    durable_name: name,
    filter_subject: subject,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(60_000),
    max_ack_pending: infra.maxAckPending,
  });
  const existing = (await jsm.consumers.info(names.trajStream, name)).num_pending;
  const wanted = new Set(expected);
  const got = new Map<string, Trajectory>();
  let seen = 0;
  let duplicates = 0;
  let rejected = 0;
  let replayDone = false;
  const finishReplay = async () => {
    replayDone = true;
    await options.onReplayed(expected.filter((id) => !got.has(id)));
  };
  if (existing === 0) await finishReplay();
  if (got.size < wanted.size) {
    const consumer = await js.consumers.get(names.trajStream, name);
    const messages = await consumer.consume({ max_messages: Math.max(1, Math.min(infra.maxAckPending, expected.length)) });
    const onAbort = () => void messages.close();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    for await (const m of messages) {
      seen++;
      let trajectory: Trajectory | null = null;
      try {
        trajectory = checkTrajectory(m.subject, decode(m.data, m.subject), step);
      } catch (error) {
        rejected++;
        log(`rejected a message on '${m.subject}': ${(error as Error).message}`);
        m.term();
      }
      if (trajectory !== null) {
        // Committed first, acknowledged second: a crash in between means a redelivery, never a loss.
        const { duplicates: dup } = store.recordTrajectories(storeRunId, 'train', [trajectory]);
        duplicates += dup;
        faultPoint('trajectory-stored');
        m.ack();
        if (wanted.has(trajectory.trajectoryId) && !got.has(trajectory.trajectoryId)) {
          got.set(trajectory.trajectoryId, trajectory);
          options.onStored?.();
        }
      }
      if (!replayDone && seen >= existing) await finishReplay();
      if (got.size >= wanted.size) break;
    }
    options.signal?.removeEventListener('abort', onAbort);
    await messages.close();
    if (got.size < wanted.size && options.signal?.aborted) {
      await jsm.consumers.delete(names.trajStream, name).catch(() => false);
      throw options.signal.reason;
    }
  }
  await jsm.consumers.delete(names.trajStream, name).catch(() => false);
  if (!replayDone) await finishReplay();
  return { trajectories: expected.map((id) => got.get(id) as Trajectory), stats: { replayed: existing, duplicates, rejected } };
}
