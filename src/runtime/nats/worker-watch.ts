/**
 * A learner whose episodes workers are all gone must not wait for trajectories silently. While a
 * step is collected, the learner asks every `checkMs` on `turnwise.<run>.episodes.ping` (each
 * episodes worker answers in a queue group). NATS answers "no responders" at once when no client
 * subscribes — a worker killed with SIGKILL drops its subscriptions with its connection — so the
 * check needs no heartbeat bookkeeping. A busy worker that answers late still counts as there.
 *
 * When none is there the learner says so (the CLI prints it on its line). Once a worker has been
 * seen — it answered a ping, or its trajectories arrived (`evidence`: a worker can join, work and
 * die between two pings) — losing every worker for `waitMs` ends the wait with
 * {@link NoEpisodesWorkerError}: the run fails, resumable later. Before any worker showed up the
 * learner only reports and keeps waiting (workers are often started after the learner, which
 * registers the run they look for).
 */
import { type Clock, systemClock } from '../../core/clock.js';
import { NoResponderError, TurnwiseError } from '../../core/errors.js';
import type { Bus } from '../../bus/bus.js';
import { subjects } from '../wiring/message-flow.js';

/**
 * No episodes worker answered for the allowed time.
 * @example new NoEpisodesWorkerError('babyai-grpo-3f9a0c1e', 'babyai-grpo', 60_000, 'step 3: 20 of 32 trajectories in')
 */
export class NoEpisodesWorkerError extends TurnwiseError {
  constructor(
    readonly runId: string,
    readonly runName: string,
    readonly waitedMs: number,
    progress: string,
  ) {
    super(
      `no episodes worker has been connected to run ${runId} for ${Math.round(waitedMs / 1000)} s (${progress}); ` +
        `start one with \`turnwise worker --nats <url> --run ${runName} --role sampler,episodes\`, then \`turnwise train --resume <run folder> --nats <url>\``,
    );
  }
}

export interface WorkerWatchOptions {
  readonly bus: Bus;
  readonly runId: string;
  readonly runName: string;
  /** How often to ask, ms. */
  readonly checkMs: number;
  /** Give up after this long with no worker, ms. */
  readonly waitMs: number;
  /** What the step has so far, for the messages. */
  readonly progress: () => string;
  readonly log: (line: string) => void;
  /** A worker was already seen in an earlier step of this run (the wait then applies from the start). */
  readonly seenBefore?: boolean;
  /** Whether a worker has shown it was there other than by answering (its trajectories arrived). */
  readonly evidence?: () => boolean;
  /** Called when a worker is seen for the first time. */
  readonly onSeen?: () => void;
  /** Called once, when the wait is over. */
  readonly onGone: (error: NoEpisodesWorkerError) => void;
  readonly clock?: Clock;
}

/**
 * Starts watching; call the returned function to stop.
 * @example const stop = watchEpisodesWorkers({ bus, runId, runName, checkMs: 2000, waitMs: 300_000, progress, log, onGone: (e) => abort.abort(e) });
 */
export function watchEpisodesWorkers(options: WorkerWatchOptions): () => void {
  const clock = options.clock ?? systemClock;
  const subject = subjects.episodesPing(options.runId);
  let missingSince: number | null = null;
  let seen = options.seenBefore === true;
  let stopped = false;
  let timer: unknown = null;
  const check = async () => {
    let present = true;
    try {
      await options.bus.request(subject, {}, { timeoutMs: Math.max(1000, options.checkMs) });
    } catch (error) {
      // A timeout means a responder exists but is busy (or the server is restarting): not "gone".
      present = !(error instanceof NoResponderError);
    }
    if (stopped) return;
    const now = clock.now();
    if (!seen && options.evidence?.() === true) {
      seen = true;
      options.onSeen?.();
    }
    if (present) {
      if (missingSince !== null) options.log(`an episodes worker is connected (${options.progress()})`);
      missingSince = null;
      if (!seen) options.onSeen?.();
      seen = true;
    } else if (missingSince === null) {
      missingSince = now;
      options.log(
        seen
          ? `no episodes worker is connected (${options.progress()}); waiting up to ${Math.round(options.waitMs / 1000)} s for one`
          : `no episodes worker is connected, and none has shown up yet (${options.progress()}); start one with \`turnwise worker --nats <url> --run ${options.runName} --role sampler,episodes\``,
      );
    } else if (seen && now - missingSince >= options.waitMs) {
      stopped = true;
      options.onGone(new NoEpisodesWorkerError(options.runId, options.runName, now - missingSince, options.progress()));
      return;
    }
    timer = clock.setTimeout(() => void check(), options.checkMs);
  };
  timer = clock.setTimeout(() => void check(), options.checkMs);
  return () => {
    stopped = true;
    if (timer !== null) clock.clearTimeout(timer);
  };
}
