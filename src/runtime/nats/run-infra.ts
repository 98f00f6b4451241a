/**
 * The durable parts of a run on NATS, all named after the run's unique id (`<name>-<8 hex>`; the
 * name alone finds it through `./run-registry.ts`, which also deletes what a finished run leaves):
 *
 * - stream `TW_<run>_TRAJ` (subjects `turnwise.<run>.traj.s<step>`): every finished trajectory,
 *   published by episodes workers with `Nats-Msg-Id = <trajectoryId>` (JetStream drops a re-sent
 *   duplicate). Limits retention: a restarted learner replays a step's subject from the stream.
 * - stream `TW_<run>_PLANS` (subject `turnwise.<run>.plans`), work-queue retention: episode plans
 *   the episodes workers pull; a plan is acknowledged after its trajectory is stored in the stream,
 *   so a plan whose worker died is redelivered after `ackWaitMs` and its episode redone.
 * - KV bucket `TW_<run>_state`: `version` (policy version of the published weights), `horizon`,
 *   `status` (running / completed / interrupted / failed).
 * - object store `TW_<run>_blobs`: `manifest` (config + the policy's text side, what a worker needs to join) and
 *   `weights-v<version>` (msgpackr NamedTensors; the object store checks each chunk's SHA-256).
 */
import { AckPolicy, DeliverPolicy, jetstream, type JetStreamClient, type JetStreamManager, jetstreamManager, RetentionPolicy } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import { type ObjectStore, Objm } from '@nats-io/obj';
import { millis, type NatsConnection, nanos } from '@nats-io/transport-node';
import { InvalidArgumentError, InvalidMessageError } from '../../core/errors.js';
import type { EpisodePlan } from '../rollout.js';
import { decode, encode } from '../../bus/codec.js';

const TOKEN = /^[A-Za-z0-9_-]+$/;

/** Names of a run's streams, buckets and subjects. */
export function runNames(runId: string) {
  if (!TOKEN.test(runId)) throw InvalidArgumentError.format('runId', `expected letters, digits, '_' or '-', got ${JSON.stringify(runId)}`);
  return {
    trajStream: `TW_${runId}_TRAJ`,
    trajSubject: (step: number) => `turnwise.${runId}.traj.s${step}`,
    trajAll: `turnwise.${runId}.traj.>`,
    planStream: `TW_${runId}_PLANS`,
    planSubject: `turnwise.${runId}.plans`,
    planConsumer: 'episodes',
    stateBucket: `TW_${runId}_state`,
    blobBucket: `TW_${runId}_blobs`,
  } as const;
}

/**
 * The run id samplers of policy version `version` serve `act` under: act requests of a plan go
 * only to samplers that hold exactly the weights the plan was issued for (on-policy).
 * @example actRunId('r1', 3) // 'r1-v3' → subject 'turnwise.r1-v3.sampler.act'
 */
export function actRunId(runId: string, version: number): string {
  return `${runId}-v${version}`;
}

/** One unit of work for an episodes worker. */
export interface PlanMessage {
  readonly step: number;
  readonly horizon: number;
  /** Weights version the episode must act with. */
  readonly policyVersion: number;
  readonly plan: EpisodePlan;
}

/** Checks a decoded plan message (throws `InvalidMessageError` naming the subject). */
export function parsePlanMessage(subject: string, value: unknown): PlanMessage {
  const v = value as Record<string, unknown> | null;
  const plan = v?.plan as Record<string, unknown> | undefined;
  if (
    typeof v !== 'object' || v === null || !Number.isInteger(v.step) || !Number.isInteger(v.horizon) || !Number.isInteger(v.policyVersion) ||
    typeof plan !== 'object' || plan === null || typeof plan.taskId !== 'string' || !Number.isInteger(plan.taskIndex) ||
    typeof plan.groupId !== 'string' || typeof plan.trajectoryId !== 'string' || !Number.isInteger(plan.seed)
  ) {
    throw new InvalidMessageError(subject, 'expected { step, horizon, policyVersion: integer, plan: { taskId, taskIndex, groupId, trajectoryId, seed } }');
  }
  return value as PlanMessage;
}

export interface RunInfraOptions {
  /** Plans not acknowledged within this time are redelivered (a worker sends in-progress beats meanwhile). Default 10 s. */
  readonly planAckWaitMs?: number;
  /**
   * Messages older than this leave the trajectory and plan streams (a backstop: a finished run's
   * streams are deleted, older steps purged at each checkpoint). Default 7 days; applies to streams
   * this call creates.
   */
  readonly maxAgeMs?: number;
  /** Trajectories a learner may hold unacknowledged (bounds memory). Default 1024. */
  readonly maxAckPending?: number;
}

/** Handles on a run's streams, KV bucket and object store. */
export interface RunInfra {
  readonly runId: string;
  readonly names: ReturnType<typeof runNames>;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly state: KV;
  readonly blobs: ObjectStore;
  readonly planAckWaitMs: number;
  readonly maxAckPending: number;
}

/**
 * Creates (or opens, when they exist) the run's streams, consumer, bucket and object store.
 * @example const infra = await openRunInfra(bus.connection, 'r1');
 */
export async function openRunInfra(nc: NatsConnection, runId: string, options: RunInfraOptions = {}): Promise<RunInfra> {
  const names = runNames(runId);
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const maxAckPending = options.maxAckPending ?? 1024;
  const maxAge = nanos(options.maxAgeMs ?? DEFAULT_MAX_AGE_MS);
  await ensureStream(jsm, { name: names.trajStream, subjects: [names.trajAll], retention: RetentionPolicy.Limits, max_age: maxAge });
  await ensureStream(jsm, { name: names.planStream, subjects: [names.planSubject], retention: RetentionPolicy.Workqueue, max_age: maxAge });
  const existing = await jsm.consumers.info(names.planStream, names.planConsumer).catch(() => null);
  if (existing === null) {
    await jsm.consumers.add(names.planStream, {
      durable_name: names.planConsumer,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(options.planAckWaitMs ?? 10_000),
      deliver_policy: DeliverPolicy.All,
      max_ack_pending: maxAckPending,
    });
  } else if (options.planAckWaitMs !== undefined) {
    // The learner owns the setting; a worker (no option) keeps what it finds.
    await jsm.consumers.update(names.planStream, names.planConsumer, { ack_wait: nanos(options.planAckWaitMs) });
  }
  // Workers read the ack wait back: their in-progress beats must come well within it.
  const planAckWaitMs = millis((await jsm.consumers.info(names.planStream, names.planConsumer)).config.ack_wait ?? nanos(10_000));
  const state = await new Kvm(js).create(names.stateBucket, { history: 1 });
  const blobs = await new Objm(js).create(names.blobBucket);
  return { runId, names, js, jsm, state, blobs, planAckWaitMs, maxAckPending };
}

/** Default {@link RunInfraOptions.maxAgeMs}: 7 days. */
export const DEFAULT_MAX_AGE_MS = 7 * 24 * 3_600_000;

async function ensureStream(jsm: JetStreamManager, config: { name: string; subjects: string[]; retention: RetentionPolicy; max_age: number }): Promise<void> {
  try {
    await jsm.streams.info(config.name);
  } catch {
    await jsm.streams.add({ ...config, duplicate_window: nanos(120_000) });
  }
}

/**
 * Drops the trajectories of steps `[fromStep, toStep)` from the stream: a checkpoint at `toStep`
 * means a resume never replays them (they are in the run store).
 * @example await purgeSteps(infra, 0, 10);
 */
export async function purgeSteps(infra: RunInfra, fromStep: number, toStep: number): Promise<number> {
  let purged = 0;
  for (let step = fromStep; step < toStep; step++) purged += (await infra.jsm.streams.purge(infra.names.trajStream, { filter: infra.names.trajSubject(step) })).purged;
  return purged;
}

/** Puts a blob (msgpackr-encoded) under `name`. */
export async function putBlob(infra: RunInfra, name: string, value: unknown): Promise<void> {
  await infra.blobs.putBlob({ name }, encode(value, `object ${name}`));
}

/** Reads a blob; null when absent. A corrupt object (digest mismatch) rejects. */
export async function getBlob(infra: RunInfra, name: string): Promise<unknown | null> {
  const bytes = await infra.blobs.getBlob(name);
  return bytes === null ? null : decode(bytes, `object ${name}`);
}

/** Object name of a weights version. */
export function weightsName(version: number): string {
  return `weights-v${version}`;
}

/** Run-state keys in the KV bucket. */
export type StateKey = 'version' | 'horizon' | 'status';

/** Writes a run-state value (msgpackr). */
export async function setState(infra: RunInfra, key: StateKey, value: number | string): Promise<void> {
  await infra.state.put(key, encode(value, `kv ${key}`));
}

/** Reads a run-state value, or null. */
export async function getState(infra: RunInfra, key: StateKey): Promise<unknown | null> {
  const entry = await infra.state.get(key);
  if (entry === null || entry.operation !== 'PUT' || entry.value.byteLength === 0) return null;
  return decode(entry.value, `kv ${key}`);
}

/**
 * Calls `onValue` with the current value of `key` and every later one, until the returned stop is called.
 * @example const stop = await watchState(infra, 'version', (v) => loadWeights(v as number));
 */
export async function watchState(infra: RunInfra, key: StateKey, onValue: (value: unknown) => void): Promise<() => void> {
  const watch = await infra.state.watch({ key });
  void (async () => {
    for await (const entry of watch) {
      if (entry.operation !== 'PUT' || entry.value.byteLength === 0) continue;
      try {
        onValue(decode(entry.value, `kv ${key}`));
      } catch (error) {
        console.error(`[turnwise nats] bad value for state '${key}':`, (error as Error).message);
      }
    }
  })();
  return () => watch.stop();
}
