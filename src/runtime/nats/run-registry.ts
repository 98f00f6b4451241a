/**
 * Which run a `run.name` means on a NATS server, and the retention of every run's NATS state.
 *
 * Streams, subjects, buckets and trajectory ids carry the run's unique id (`<name>-<8 hex>`,
 * `newRunId`), never the name alone, so a new run can never replay or store another run's
 * trajectories. The name is for people: `turnwise worker --run <name>` finds the run through the
 * KV bucket `TW_runs` (key: the name, value: {@link RunRegistration}), and a new run claims the
 * name there with a compare-and-set, refusing a name whose run still has its streams unless told
 * to replace that run (`--replace-nats-run`) or to resume it (`--resume`).
 *
 * Retention, so the server's store does not grow without end: a completed run's trajectory and
 * plan streams and its object store are deleted (the run folder holds everything); its small state
 * bucket stays for late workers to read `completed` and goes when the next run of that name
 * starts. While a run trains, trajectories of steps before its latest checkpoint are purged (a
 * resume replays only later steps), and every stream has a maximum age as a backstop.
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { TurnwiseError } from '../../core/errors.js';
import { decode, encode } from '../../bus/codec.js';
import { runNames } from './run-infra.js';

/** The registry bucket (one per server). */
export const REGISTRY_BUCKET = 'TW_runs';

/** The run a name stands for. */
export interface RunRegistration {
  readonly runId: string;
  /** running, completed, interrupted, failed, or replaced (by a run started with --replace-nats-run). */
  readonly status: string;
  /** Wall time of the last change, ms since the epoch. */
  readonly updatedAt: number;
}

/**
 * A new run asked for a name whose run still has its streams on the server.
 * @example catch (e) { if (e instanceof RunNameTakenError) console.error(e.holder.runId); }
 */
export class RunNameTakenError extends TurnwiseError {
  constructor(
    readonly runName: string,
    readonly holder: RunRegistration,
    resuming: boolean,
  ) {
    const what = resuming ? 'this run folder holds another run of that name' : 'a new run would mix with it';
    super(
      `run name '${runName}' belongs to run ${holder.runId} (${holder.status}) on this NATS server, whose streams still exist; ${what}. ` +
        `Resume that run with \`turnwise train --resume <its run folder> --nats …\`, or pass --replace-nats-run to delete its streams, buckets and objects and take the name`,
    );
  }
}

/** The KV key of a name (the sanitized name: one subject token). */
export function registryKey(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

async function registry(nc: NatsConnection): Promise<KV> {
  return new Kvm(jetstream(nc)).create(REGISTRY_BUCKET, { history: 1 });
}

async function streamExists(jsm: JetStreamManager, name: string): Promise<boolean> {
  return jsm.streams.info(name).then(
    () => true,
    () => false,
  );
}

/** Whether a run still has its trajectory or plan stream (what would mix into a new run). */
async function hasStreams(jsm: JetStreamManager, runId: string): Promise<boolean> {
  const names = runNames(runId);
  return (await streamExists(jsm, names.trajStream)) || (await streamExists(jsm, names.planStream));
}

/**
 * Deletes a run's streams, state bucket and object store (those that exist); returns what went.
 * @example await deleteRunResources(jsm, 'babyai-grpo-3f9a0c1e') // ['TW_…_TRAJ', 'TW_…_PLANS', 'KV_TW_…_state', 'OBJ_TW_…_blobs']
 */
export async function deleteRunResources(jsm: JetStreamManager, runId: string, which: { keepState?: boolean } = {}): Promise<string[]> {
  const names = runNames(runId);
  const streams = [names.trajStream, names.planStream, `OBJ_${names.blobBucket}`, ...(which.keepState ? [] : [`KV_${names.stateBucket}`])];
  const deleted: string[] = [];
  for (const stream of streams) if (await jsm.streams.delete(stream).catch(() => false)) deleted.push(stream);
  return deleted;
}

/** The registration of a name, or null. */
export async function readRegistration(nc: NatsConnection, name: string): Promise<{ value: RunRegistration; revision: number } | null> {
  const entry = await (await registry(nc)).get(registryKey(name));
  if (entry === null || entry.operation !== 'PUT' || entry.value.byteLength === 0) return null;
  return { value: decode(entry.value, `kv ${REGISTRY_BUCKET}.${registryKey(name)}`) as RunRegistration, revision: entry.revision };
}

/**
 * Checks, before a run starts, that it may use `name` (no writes): refuses with
 * {@link RunNameTakenError} when the name's run is another one and still has its streams, unless
 * `replace`.
 * @example await checkRunName(nc, 'babyai-grpo', runId, { resuming: false, replace: false });
 */
export async function checkRunName(nc: NatsConnection, name: string, runId: string, options: { resuming: boolean; replace: boolean }): Promise<void> {
  const current = await readRegistration(nc, name);
  if (current === null || current.value.runId === runId || options.replace) return;
  if (await hasStreams(await jetstreamManager(nc), current.value.runId)) throw new RunNameTakenError(name, current.value, options.resuming);
}

/**
 * Makes `runId` the run of `name` (compare-and-set). The previous run of the name loses what it
 * still holds on the server: everything when it was replaced (its workers read status `replaced`
 * first), its leftover state bucket when it had completed. Returns lines to log.
 * @example const notes = await claimRunName(nc, 'babyai-grpo', runId, { resuming: false, replace: false, now: Date.now() });
 */
export async function claimRunName(nc: NatsConnection, name: string, runId: string, options: { resuming: boolean; replace: boolean; now: number }): Promise<string[]> {
  await checkRunName(nc, name, runId, options);
  const kv = await registry(nc);
  const jsm = await jetstreamManager(nc);
  const key = registryKey(name);
  const current = await readRegistration(nc, name);
  const value = encode({ runId, status: 'running', updatedAt: options.now } satisfies RunRegistration, `kv ${REGISTRY_BUCKET}.${key}`);
  // A concurrent claim of the same name makes one of these fail: that run stops here.
  if (current === null) await kv.create(key, value);
  else await kv.update(key, value, current.revision);
  const notes: string[] = [];
  const previous = current?.value;
  if (previous !== undefined && previous.runId !== runId) {
    if (await hasStreams(jsm, previous.runId)) {
      // Replaced: tell its workers, then delete everything it holds.
      const state = await new Kvm(jetstream(nc)).open(runNames(previous.runId).stateBucket).catch(() => null);
      await state?.put('status', encode('replaced', 'kv status')).catch(() => undefined);
      const deleted = await deleteRunResources(jsm, previous.runId);
      notes.push(`replaced run ${previous.runId} (${previous.status}) as the run of '${name}': deleted ${deleted.join(', ')}`);
    } else {
      await deleteRunResources(jsm, previous.runId);
    }
  }
  return notes;
}

/** Records a run's end in the registry (if the name is still its). */
export async function markRunEnded(nc: NatsConnection, name: string, runId: string, status: string, now: number): Promise<void> {
  const current = await readRegistration(nc, name);
  if (current === null || current.value.runId !== runId) return;
  await (await registry(nc)).update(registryKey(name), encode({ runId, status, updatedAt: now } satisfies RunRegistration, 'kv registry'), current.revision);
}

/**
 * The run id a worker's `--run` means: the running run registered under that name, or the value
 * itself when it is a run id with streams on the server (and for runs started before run ids had
 * a unique part, whose id is the name). Waits for such a run to appear (a worker may start first).
 * @example const runId = await resolveRunId(nc, 'babyai-grpo', { log: console.error });
 */
export async function resolveRunId(nc: NatsConnection, run: string, options: { signal?: AbortSignal; log?: (line: string) => void } = {}): Promise<string> {
  const jsm = await jetstreamManager(nc);
  let told = false;
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    if (options.signal?.aborted) throw new TurnwiseError(`stopped before a run '${run}' started`);
    const registered = await readRegistration(nc, run);
    if (registered !== null && registered.value.status === 'running') return registered.value.runId;
    if (registered === null && /^[A-Za-z0-9_-]+$/.test(run) && (await hasStreams(jsm, run))) return run;
    if (!told) {
      told = true;
      options.log?.(registered === null ? `worker: waiting for a run '${run}' to start` : `worker: the run of '${run}' (${registered.value.runId}) is ${registered.value.status}; waiting for one to run`);
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
