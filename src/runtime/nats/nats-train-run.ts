/**
 * A training run whose episodes run on worker processes over NATS (`turnwise train --nats`).
 *
 * This process keeps the coordinator, the horizon scheduler, the learner, the run store and the
 * held-out evaluation (the same `trainRun` assembly as in-process); per step it
 * 1. sets the KV `horizon`, then replays the step's subject of the trajectory stream (a restart
 *    gets back what was produced before the crash) and publishes the missing episode plans to the
 *    plans work queue (`Nats-Msg-Id` = trajectory id, so a re-published plan is dropped),
 * 2. commits each trajectory to the run store, then acknowledges it, until the step is complete,
 * 3. trains, writes the new weights to the object store and the new `version` to the KV bucket;
 *    sampler workers load them and serve act requests for exactly that version.
 *
 * A slow learner slows sampling: plans of step s+1 are published only after step s is trained.
 */
import { headers } from '@nats-io/transport-node';
import type { NamedTensors } from '../../models/checkpoint.js';
import { encode } from '../codec.js';
import type { EpisodePlan } from '../rollout.js';
import { type DistributedRollout, type TrainRunOptions, type TrainRunResult, trainRun } from '../train-run.js';
import type { NatsConnectOptions } from './connect.js';
import { NatsBus } from './nats-bus.js';
import { openRunInfra, type PlanMessage, putBlob, type RunInfra, type RunInfraOptions, setState, weightsName } from './run-infra.js';
import { collectStep } from './trajectory-stream.js';

export interface NatsTrainRunOptions extends Omit<TrainRunOptions, 'distributed'> {
  readonly nats: NatsConnectOptions;
  readonly infra?: RunInfraOptions;
  /** Progress lines (replays, duplicates); default: none. */
  readonly log?: (line: string) => void;
}

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

/**
 * Runs (or resumes) a training job with its episodes on NATS workers.
 * @example await natsTrainRun({ config, nats: { servers: 'nats://127.0.0.1:4222' } });
 */
export async function natsTrainRun(options: NatsTrainRunOptions): Promise<TrainRunResult> {
  const bus = await NatsBus.connect({ name: 'turnwise-learner', ...options.nats });
  const log = options.log ?? (() => {});
  let infra: RunInfra | null = null;
  let storeRef: { store: Parameters<DistributedRollout['start']>[0]['store']; runId: string } | null = null;
  let version = 0;
  const need = (): RunInfra => {
    if (infra === null) throw new Error('natsTrainRun: the run infrastructure is not open yet');
    return infra;
  };
  const distributed: DistributedRollout = {
    async start(run) {
      infra = await openRunInfra(bus.connection, run.runId, options.infra);
      storeRef = { store: run.store, runId: run.runId };
      version = run.version;
      await putBlob(infra, 'manifest', { config: options.config, text: run.text });
      await this.publishWeights(run.version, run.weights);
      await setState(infra, 'status', 'running');
      log(`run '${run.runId}' on NATS: manifest and weights v${run.version} published`);
    },
    async rollout(step: number, horizon: number, plans: readonly EpisodePlan[]) {
      const current = need();
      await setState(current, 'horizon', horizon);
      const byId = new Map(plans.map((p) => [p.trajectoryId, p]));
      const { trajectories, stats } = await collectStep({
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
      });
      if (stats.replayed > 0 || stats.duplicates > 0 || stats.rejected > 0) {
        log(`step ${step}: ${stats.replayed} trajectories replayed from the stream, ${stats.duplicates} already stored, ${stats.rejected} rejected`);
      }
      return trajectories;
    },
    async publishWeights(next: number, weights: NamedTensors) {
      const current = need();
      await putBlob(current, weightsName(next), weights);
      await setState(current, 'version', next);
      version = next;
      // Keep the previous version for samplers still finishing a batch; older ones go.
      if (next >= 2) await current.blobs.delete(weightsName(next - 2)).catch(() => undefined);
    },
    async finish(status) {
      if (infra !== null) await setState(infra, 'status', status);
    },
  };
  try {
    return await trainRun({ ...options, distributed });
  } finally {
    await bus.close();
  }
}
