/**
 * The `episodes` role of a worker: pulls episode plans from the run's work queue (at most
 * `poolSize` at a time: bounded in-flight work per worker), runs each with the in-process
 * `RolloutRunner` (episode actor + env session), asks the samplers for actions over NATS, publishes
 * the trajectory to the JetStream stream and only then acknowledges the plan.
 *
 * While an episode runs, the worker tells JetStream it is still working on the plan; if the worker
 * dies, the plan is redelivered after the ack wait and another worker redoes the episode (the
 * trajectory id is the plan's, so the redone episode replaces, never adds to, the lost one).
 */
import type { Clock } from '../../core/clock.js';
import { systemClock } from '../../core/clock.js';
import type { ResolvedConfig } from '../../core/config.js';
import type { JsMsg } from '@nats-io/jetstream';
import { faultPoint } from '../../core/fault-point.js';
import { decode } from '../../bus/codec.js';
import { getEnvironmentSpec } from '../../envs/registry.js';
import type { EnvironmentSpec } from '../../envs/environment.js';
import type { PolicyText } from '../../models/policy-text.js';
import { MemoryBus } from '../../bus/memory-bus.js';
import { RolloutRunner } from '../rollout.js';
import { rolloutShapingOf } from '../reward-shaping.js';
import type { NatsBus } from '../../bus/nats-bus.js';
import { actRunId, parsePlanMessage, type RunInfra } from './run-infra.js';
import { subjects } from '../wiring/message-flow.js';
import { SplitBus } from '../../bus/split-bus.js';
import { outlastOutage } from './outage.js';
import { publishTrajectoryDurably } from './trajectory-stream.js';

export interface EpisodesWorkerOptions {
  readonly bus: NatsBus;
  readonly infra: RunInfra;
  readonly config: ResolvedConfig;
  readonly text: PolicyText;
  /** Episodes in flight at most (default: the run's episodes per step). */
  readonly poolSize?: number;
  /** Environment to run (default: the config's, from the registry); the `env` role passes a remote one. */
  readonly spec?: EnvironmentSpec;
  readonly log: (line: string) => void;
  readonly clock?: Clock;
}

/** A running episodes role. */
export interface EpisodesWorker {
  /** Trajectories this worker published (JetStream-acknowledged). */
  readonly published: () => number;
  close(): Promise<void>;
}

/** A redone episode that ended in `error` (a sampler gone, a server restarting) is retried this often before it is kept. */
const MAX_ERROR_RETRIES = 4;

/**
 * Starts the episodes role.
 * @example const episodes = await startEpisodesWorker({ bus, infra, config, text, log: console.log });
 */
export async function startEpisodesWorker(options: EpisodesWorkerOptions): Promise<EpisodesWorker> {
  const { bus, infra, config, text, log } = options;
  const clock = options.clock ?? systemClock;
  const poolSize = options.poolSize ?? config.derived.episodesPerStep;
  const spec = options.spec ?? getEnvironmentSpec(config.env.name);
  const local = new MemoryBus({ clock });
  // Env sessions are private to this worker; act requests go to the samplers over NATS.
  const split = new SplitBus(local, bus, { isLocal: (subject) => /^turnwise\.[^.]+\.env\./.test(subject), clock });
  const runners = new Map<number, { runner: RolloutRunner; active: number }>();
  const runnerFor = (version: number) => {
    let entry = runners.get(version);
    if (entry === undefined) {
      const runner = new RolloutRunner({
        bus: split,
        runId: actRunId(infra.runId, version),
        spec,
        envSettings: config.env.settings as Record<string, unknown>,
        poolSize,
        text,
        maxActionTokens: config.sampling.maxActionTokens,
        constrained: config.sampling.constrained,
        actions: config.context.actions,
        envTimeoutMs: config.runtime.envTimeoutMs,
        actTimeoutMs: config.runtime.requestTimeoutMs,
        clock,
        ...rolloutShapingOf(config),
      });
      entry = { runner, active: 0 };
      runners.set(version, entry);
    }
    return entry;
  };
  const retire = (latest: number) => {
    for (const [version, entry] of runners) {
      if (version < latest && entry.active === 0) {
        runners.delete(version);
        void entry.runner.close();
      }
    }
  };

  let published = 0;
  let lastStep = -1;
  let inFlight = 0;
  let stopped = false;
  let wake: (() => void) | null = null;
  const slotFreed = () => {
    const w = wake;
    wake = null;
    w?.();
  };

  const runPlan = async (m: JsMsg) => {
    let message: ReturnType<typeof parsePlanMessage>;
    try {
      message = parsePlanMessage(m.subject, decode(m.data, m.subject));
    } catch (error) {
      log(`episodes: rejected a plan on '${m.subject}': ${(error as Error).message}`);
      m.term();
      return;
    }
    if (message.step > lastStep) {
      lastStep = message.step;
      log(`episodes: running plans of step ${message.step} (policy v${message.policyVersion})`);
    }
    const entry = runnerFor(message.policyVersion);
    entry.active++;
    // At most 1 s apart: the learner may shorten the ack wait after this worker joined.
    const beat = setInterval(() => m.working(), Math.max(200, Math.min(1000, infra.planAckWaitMs / 3)));
    try {
      const [trajectory] = await entry.runner.run(message.step, message.horizon, [message.plan]);
      if (trajectory === undefined) throw new Error('the rollout runner returned no trajectory');
      if (trajectory.outcome === 'error' && m.info.deliveryCount <= MAX_ERROR_RETRIES) {
        log(`episodes: ${trajectory.trajectoryId} ended in error (${trajectory.error ?? 'unknown'}); redelivering its plan`);
        m.nak(500);
        return;
      }
      // Repeated through a server restart: the trajectory id (Nats-Msg-Id) makes a second copy a no-op.
      await outlastOutage(`publishing ${trajectory.trajectoryId}`, () => publishTrajectoryDurably(infra, trajectory), { log: (line) => log(`episodes: ${line}`), clock });
      published++;
      faultPoint('trajectory-published');
      m.ack();
    } catch (error) {
      log(`episodes: plan ${message.plan.trajectoryId} failed: ${(error as Error).message}; redelivering it`);
      m.nak(500);
    } finally {
      clearInterval(beat);
      entry.active--;
      retire(message.policyVersion);
    }
  };

  // The learner asks whether any episodes worker is connected (a run whose workers all died fails instead of waiting silently).
  const ping = bus.subscribe(subjects.episodesPing(infra.runId), () => ({ pid: process.pid }), { queue: 'episodes-ping' });

  const loop = (async () => {
    const consumer = await outlastOutage('opening the plan queue', () => infra.js.consumers.get(infra.names.planStream, infra.names.planConsumer), { log: (line) => log(`episodes: ${line}`), clock });
    while (!stopped) {
      if (inFlight >= poolSize) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        continue;
      }
      try {
        // Ask only for as many plans as there are free slots: the work queue holds the rest.
        const batch = await consumer.fetch({ max_messages: poolSize - inFlight, expires: 1000 });
        for await (const m of batch) {
          inFlight++;
          void runPlan(m).finally(() => {
            inFlight--;
            slotFreed();
          });
        }
      } catch (error) {
        if (stopped) break;
        log(`episodes: fetching plans failed (${(error as Error).message}); retrying`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  })();

  return {
    published: () => published,
    async close() {
      stopped = true;
      ping.unsubscribe();
      slotFreed();
      await loop.catch(() => undefined);
      for (const entry of runners.values()) await entry.runner.close();
      await local.close();
    },
  };
}
