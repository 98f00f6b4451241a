/**
 * Runs the asynchronous training loop (`async-loop-machine.ts`, where its states are described)
 * with its I/O: the effects become the machine's named actors, an abort signal becomes `STOP`, and
 * the `exclusive` work of a completed step becomes the `HOLD` / `RELEASE` handshake. The I/O is
 * injected, so a seeded simulation (scripted episodes, random interleavings) drives the same code
 * as a real run.
 *
 * Batches are filled in admission order with the same plans as the synchronous loop
 * (`trainPlans(config, indices, b, runId)`), so every mode sees the same tasks and seeds per step.
 * Admission (see `staleness.ts`): an episode of batch `b` starts only while fewer than
 * `maxInFlight` are running and the samplers hold version ≥ `b − η`.
 */
import { type Actor, createActor, fromCallback, fromPromise, toPromise } from 'xstate';
import type { Metrics } from '../../actors/learner.js';
import type { Clock } from '../../core/clock.js';
import type { Trajectory } from '../../core/types.js';
import type { EpisodePlan } from '../rollout.js';
import { type AsyncLoopAccepts, asyncLoopMachine, type StartEpisodes } from './async-loop-machine.js';
import { type Admission, type PartialRollout, persistedState } from './async-loop-state.js';
import type { StalenessState } from './staleness.js';

export type { PartialRollout } from './async-loop-state.js';

/** The I/O of the loop, injected. */
export interface AsyncLoopEffects {
  /** Episode plans of batch `batch` (the synchronous loop's `trainPlans`). */
  plans(batch: number): readonly EpisodePlan[];
  /** Runs one episode to its trajectory (environment failures end as outcome `error`, not as a rejection). */
  runEpisode(plan: EpisodePlan, batch: number): Promise<Trajectory>;
  /** Weights version the samplers hold now (never decreases). */
  samplerVersion(): number;
  /** One update on batch `batch`'s trajectories at learner version `batch`; returns the new version. */
  train(batch: number, trajectories: readonly Trajectory[]): Promise<{ readonly version: number; readonly metrics: Metrics }>;
  /** Hands weights `version` to the samplers; resolves once they loaded it (rejects on timeout). */
  publishWeights(version: number): Promise<void>;
  /**
   * Logging, horizon advance, evaluation, checkpoint of a finished step. `exclusive(work)` runs
   * `work` with no episode in flight (evaluation shares the samplers and environments).
   */
  stepCompleted(batch: number, metrics: Metrics, control: AsyncLoopControl): Promise<void>;
}

/** What `stepCompleted` may do with the loop. */
export interface AsyncLoopControl {
  /** Runs `work` once every episode in flight has finished, admitting none meanwhile. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** The bound's state as a checkpoint stores it. */
  persist(): StalenessState;
}

export interface AsyncLoopOptions {
  /** First batch to train (= completed steps = learner version at start). */
  readonly startStep: number;
  readonly totalSteps: number;
  /** η: largest staleness any trained token may have. */
  readonly maxStaleness: number;
  readonly partialRollout: PartialRollout;
  /** Episodes running at once (the environment pool size). */
  readonly maxInFlight: number;
  /** Restored counters (from the checkpoint's `state.async`). */
  readonly restored?: StalenessState;
  readonly clock: Pick<Clock, 'now'>;
  /** Abort: stop admitting, finish the step being trained, return `stopped`. */
  readonly signal?: AbortSignal;
}

export interface AsyncLoopResult {
  readonly status: 'finished' | 'stopped';
  readonly completedSteps: number;
  readonly state: StalenessState;
}

type LoopActor = Actor<typeof asyncLoopMachine>;

/** `exclusive` as the machine's handshake: `HOLD`, wait for `EXCLUSIVE_READY` (or a refusal), work, `RELEASE`. */
async function exclusiveOn<T>(loop: LoopActor, work: () => Promise<T>): Promise<T> {
  await new Promise<void>((resolve, reject) => {
    const subscriptions = [
      loop.on('EXCLUSIVE_READY', () => {
        for (const s of subscriptions) s.unsubscribe();
        resolve();
      }),
      loop.on('EXCLUSIVE_REFUSED', (e) => {
        for (const s of subscriptions) s.unsubscribe();
        reject(e.error);
      }),
    ];
    loop.send({ type: 'HOLD' });
  });
  try {
    return await work();
  } finally {
    loop.send({ type: 'RELEASE' });
  }
}

/** Starts one episode and reports how it ended to the loop (a synchronous throw counts as a rejection). */
function startEpisode(fx: AsyncLoopEffects, { plan, batch, index }: Admission, sendBack: (event: AsyncLoopAccepts) => void): void {
  let running: Promise<Trajectory>;
  try {
    running = fx.runEpisode(plan, batch);
  } catch (error) {
    running = Promise.reject(error);
  }
  running.then(
    (trajectory) => sendBack({ type: 'EPISODE_DONE', batch, index, trajectory }),
    (error: unknown) => sendBack({ type: 'EPISODE_FAILED', batch, index, error }),
  );
}

/**
 * Runs batches `startStep .. totalSteps − 1` asynchronously under the staleness bound. Rejects with
 * the first failure (a failed episode, a rejected effect, a batch entirely over η, a deadlock) once
 * the episodes in flight have ended.
 * @example const { status, completedSteps } = await runAsyncLoop({ startStep: 0, totalSteps: 60, maxStaleness: 2, partialRollout: 'continue', maxInFlight: 64, clock }, effects);
 */
export async function runAsyncLoop(o: AsyncLoopOptions, fx: AsyncLoopEffects): Promise<AsyncLoopResult> {
  let loop: LoopActor | null = null;
  const started = (): LoopActor => loop as LoopActor; // effects run only once the actor exists
  const control: AsyncLoopControl = {
    exclusive: (work) => exclusiveOn(started(), work),
    persist: () => persistedState(started().getSnapshot().context),
  };
  const logic = asyncLoopMachine.provide({
    actors: {
      episodes: fromCallback<StartEpisodes>(({ sendBack, receive }) => {
        receive((event) => {
          for (const episode of event.episodes) startEpisode(fx, episode, sendBack);
        });
      }),
      train: fromPromise<{ readonly version: number; readonly metrics: Metrics }, { batch: number; trajectories: readonly Trajectory[] }>(({ input }) =>
        fx.train(input.batch, input.trajectories),
      ),
      publishWeights: fromPromise<void, { version: number }>(({ input }) => fx.publishWeights(input.version)),
      stepCompleted: fromPromise<void, { batch: number; metrics: Metrics }>(({ input }) => fx.stepCompleted(input.batch, input.metrics, control)),
    },
  });
  const { signal, ...settings } = o;
  loop = createActor(logic, {
    input: { ...settings, plans: (batch) => fx.plans(batch), samplerVersion: () => fx.samplerVersion(), stopped: signal?.aborted === true },
  });
  const actor = loop;
  const onAbort = () => actor.send({ type: 'STOP' });
  signal?.addEventListener('abort', onAbort);
  try {
    actor.start();
    const output = await toPromise(actor);
    if (output.status === 'failed') throw output.error;
    return { status: output.status, completedSteps: output.completedSteps, state: output.state };
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}
