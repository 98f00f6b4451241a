/**
 * A training run whose episodes run on worker processes over NATS (`turnwise train --nats`).
 *
 * This process keeps the coordinator, the horizon scheduler, the learner, the run store and the
 * held-out evaluation (the same `trainRun` assembly as in-process); per step it
 * 1. sets the KV `horizon`, then replays the step's subject of the trajectory stream (a restart
 *    gets back what was produced before the crash) and publishes the missing episode plans to the
 *    plans work queue (`Nats-Msg-Id` = trajectory id, so a re-published plan is dropped),
 * 2. commits each trajectory to the run store, then acknowledges it, until the step is complete
 *    (meanwhile it checks that an episodes worker is connected: `./worker-watch.ts`),
 * 3. trains, writes the new weights to the object store and the new `version` to the KV bucket;
 *    sampler workers load them and serve act requests for exactly that version.
 *
 * The run's NATS state is named by its unique run id; the run name is claimed in the registry
 * before anything is published, and a finished run's streams are deleted (`./run-registry.ts`).
 * A slow learner slows sampling: plans of step s+1 are published only after step s is trained.
 * A restart of the NATS server is waited out (`./outage.ts`): every call above is repeated until
 * the server answers, for up to `outageWaitMs`; past that the run fails, resumable.
 */
import { headers } from '@nats-io/transport-node';
import { type Clock, systemClock } from '../../core/clock.js';
import { faultPoint } from '../../core/fault-point.js';
import { CheckpointError } from '../../core/errors.js';
import type { NamedTensors } from '../../models/checkpoint.js';
import { RunStore } from '../../store/run-store.js';
import { encode } from '../../bus/codec.js';
import type { EpisodePlan } from '../rollout.js';
import { newRunId } from '../run-folder.js';
import { type DistributedRollout, type TrainRunOptions, type TrainRunResult, trainRun } from '../train/train-run.js';
import type { NatsConnectOptions } from '../../bus/nats-connect.js';
import { NatsBus } from '../../bus/nats-bus.js';
import { openRunInfra, type PlanMessage, purgeSteps, putBlob, type RunInfra, type RunInfraOptions, setState, weightsName } from './run-infra.js';
import { checkRunName, claimRunName, deleteRunResources, markRunEnded } from './run-registry.js';
import { NatsOutageError, outlastOutage } from './outage.js';
import { collectStep } from './trajectory-stream.js';
import { watchEpisodesWorkers } from './worker-watch.js';

export interface NatsTrainRunOptions extends Omit<TrainRunOptions, 'distributed' | 'runId'> {
  readonly nats: NatsConnectOptions;
  readonly infra?: RunInfraOptions;
  /** Progress lines (replays, duplicates, missing workers); default: none. */
  readonly log?: (line: string) => void;
  /**
   * Take the run name from the run that holds it on the server, deleting that run's streams,
   * buckets and objects (`--replace-nats-run`). Without it a new run refuses such a name.
   */
  readonly replaceRun?: boolean;
  /** Fail the step (and the run, resumable) when every episodes worker has been gone this long, ms. Default 5 minutes. */
  readonly workerWaitMs?: number;
  /** How often to check for episodes workers while a step is collected, ms. Default 2 s. */
  readonly workerCheckMs?: number;
  /** Keep repeating a NATS call this long while the server is unreachable (a restart), ms. Default 5 minutes. */
  readonly outageWaitMs?: number;
  readonly clock?: Clock;
}

/** Default {@link NatsTrainRunOptions.workerWaitMs}. */
export const DEFAULT_WORKER_WAIT_MS = 300_000;

/** Publishes episode plans to the work queue; JetStream drops a plan id it has seen in the last 2 minutes. */
async function publishPlans(infra: RunInfra, messages: readonly PlanMessage[]): Promise<void> {
  await Promise.all(
    messages.map((m) => {
      const h = headers();
      h.set('Turnwise-Step', String(m.step));
      return infra.js.publish(infra.names.planSubject, encode(m, infra.names.planSubject), { msgID: `plan/${m.plan.trajectoryId}`, headers: h });
    }),
  );
}

/** The id of the run a run folder holds (to resume it under the same NATS names). */
function storedRunId(runDir: string): string {
  const store = RunStore.open(runDir, { readonly: true });
  try {
    if (store.runId === null) throw new CheckpointError(runDir, 'run.db holds no run to resume');
    return store.runId;
  } finally {
    store.close();
  }
}

/**
 * Runs (or resumes) a training job with its episodes on NATS workers.
 * @example await natsTrainRun({ config, nats: { servers: 'nats://127.0.0.1:4222' } });
 */
export async function natsTrainRun(options: NatsTrainRunOptions): Promise<TrainRunResult> {
  const bus = await NatsBus.connect({ name: 'turnwise-learner', ...options.nats });
  const nc = bus.connection;
  const log = options.log ?? (() => {});
  const clock = options.clock ?? systemClock;
  const name = options.config.run.name;
  const resuming = options.resumeDir !== undefined;
  const replace = options.replaceRun === true;
  let infra: RunInfra | null = null;
  let storeRef: { store: Parameters<DistributedRollout['start']>[0]['store']; runId: string } | null = null;
  let version = 0;
  let purgedUpTo = 0;
  let workerSeen = false;
  let deliveries = { consumer: 0, stream: 0 };
  // Once the run is on the server, a restart of the server is waited out, not fatal (./outage.ts).
  const retried = <T>(action: string, op: () => Promise<T>): Promise<T> => outlastOutage(action, op, { log, clock, ...(options.outageWaitMs !== undefined ? { waitMs: options.outageWaitMs } : {}) });
  const need = (): RunInfra => {
    if (infra === null) throw new Error('natsTrainRun: the run infrastructure is not open yet');
    return infra;
  };
  const distributed: DistributedRollout = {
    async start(run) {
      // Claimed before anything is published: a concurrent run of the same name fails here.
      for (const note of await claimRunName(nc, name, run.runId, { resuming, replace, now: Date.now() })) log(note);
      infra = await openRunInfra(nc, run.runId, options.infra);
      const { delivered } = await infra.jsm.consumers.info(infra.names.planStream, infra.names.planConsumer);
      deliveries = { consumer: delivered.consumer_seq, stream: delivered.stream_seq };
      storeRef = { store: run.store, runId: run.runId };
      version = run.version;
      await putBlob(infra, 'manifest', { config: options.config, text: run.text });
      await this.publishWeights(run.version, run.weights);
      await setState(infra, 'status', 'running');
      log(`run '${name}' (id ${run.runId}) on NATS: manifest and weights v${run.version} published`);
    },
    async rollout(step: number, horizon: number, plans: readonly EpisodePlan[]) {
      const current = need();
      await retried(`setting the horizon of step ${step}`, () => setState(current, 'horizon', horizon));
      const byId = new Map(plans.map((p) => [p.trajectoryId, p]));
      const abort = new AbortController();
      let stored = 0;
      const stopWatch = watchEpisodesWorkers({
        bus,
        runId: current.runId,
        runName: name,
        checkMs: options.workerCheckMs ?? 2000,
        waitMs: options.workerWaitMs ?? DEFAULT_WORKER_WAIT_MS,
        progress: () => `step ${step}: ${stored} of ${plans.length} trajectories in`,
        log,
        seenBefore: workerSeen,
        // Trajectories of this step came in: a worker was there, even if it died before a ping.
        evidence: () => stored > 0,
        onSeen: () => {
          workerSeen = true;
        },
        onGone: (error) => abort.abort(error),
        clock,
      });
      try {
        // Safe to repeat: a collection replays the step from the stream, and the store keeps each trajectory once.
        const { trajectories, stats } = await retried(`collecting step ${step}`, () => {
          stored = 0; // a repeat counts the step's trajectories afresh as it replays them
          return collectStep({
          infra: current,
          store: (storeRef as NonNullable<typeof storeRef>).store,
          storeRunId: (storeRef as NonNullable<typeof storeRef>).runId,
          step,
          expected: plans.map((p) => p.trajectoryId),
          onReplayed: (missing) =>
            publishPlans(
              current,
              missing.map((id) => ({ step, horizon, policyVersion: version, plan: byId.get(id) as EpisodePlan })),
            ),
          onStored: () => {
            stored++;
          },
          signal: abort.signal,
          });
        });
        if (stats.replayed > 0 || stats.duplicates > 0 || stats.rejected > 0) {
          log(`step ${step}: ${stats.replayed} trajectories replayed from the stream, ${stats.duplicates} already stored, ${stats.rejected} rejected`);
        }
        // Plans handed out again (a worker died or went silent past the ack wait): worth a line.
        const { delivered } = await retried('reading the plan consumer', () => current.jsm.consumers.info(current.names.planStream, current.names.planConsumer));
        const redelivered = delivered.consumer_seq - deliveries.consumer - (delivered.stream_seq - deliveries.stream);
        deliveries = { consumer: delivered.consumer_seq, stream: delivered.stream_seq };
        if (redelivered > 0) log(`step ${step}: ${redelivered} plan deliveries were redeliveries (a worker died or stalled; its episodes were redone)`);
        return trajectories;
      } finally {
        stopWatch();
      }
    },
    async publishWeights(next: number, weights: NamedTensors) {
      const current = need();
      faultPoint('weights-publishing');
      await retried(`publishing weights v${next}`, async () => {
        await putBlob(current, weightsName(next), weights);
        await setState(current, 'version', next);
      });
      version = next;
      // Keep the previous version for samplers still finishing a batch; older ones go.
      // (Best effort: a copy left by an outage goes with the run's object store.)
      if (next >= 2) await current.blobs.delete(weightsName(next - 2)).catch(() => undefined);
    },
    async checkpointed(completedSteps) {
      // A resume replays only steps from its checkpoint on: older trajectories are in the run store.
      if (infra === null || completedSteps <= purgedUpTo) return;
      const current = infra;
      await retried(`purging steps before ${completedSteps}`, () => purgeSteps(current, purgedUpTo, completedSteps));
      purgedUpTo = completedSteps;
    },
    async finish(status) {
      if (infra === null) return;
      const current = infra;
      try {
        await retried(`recording the run as ${status}`, async () => {
          await setState(current, 'status', status);
          await markRunEnded(nc, name, current.runId, status, Date.now());
        });
      } catch (error) {
        // The run folder has the outcome; a server still down must not turn it into a crash.
        if (!(error instanceof NatsOutageError)) throw error;
        log(`could not record the run as ${status} on NATS (${error.message}); the run folder has it, and \`--resume\` picks the run up again`);
        return;
      }
      if (status === 'completed') {
        // Everything is in the run folder; the small state bucket stays for late workers to read 'completed'.
        const deleted = await retried('deleting the run\'s streams', () => deleteRunResources(current.jsm, current.runId, { keepState: true }));
        log(`run completed: deleted its NATS streams and objects (${deleted.join(', ')})`);
      }
    },
  };
  try {
    const runId = resuming ? storedRunId(options.resumeDir as string) : newRunId(name);
    // Before the run folder is touched: a refused name leaves nothing to clean up.
    await checkRunName(nc, name, runId, { resuming, replace });
    return await trainRun({ ...options, ...(resuming ? {} : { runId }), distributed });
  } finally {
    await bus.close();
  }
}
