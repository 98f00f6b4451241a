import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import { NoResponderError } from '../../../src/core/errors.js';
import type { Bus } from '../../../src/bus/bus.js';
import { NoEpisodesWorkerError, watchEpisodesWorkers } from '../../../src/runtime/nats/worker-watch.js';

/** A bus on which nobody answers the ping (every worker gone). */
const emptyBus = { request: (subject: string) => Promise.reject(new NoResponderError(subject)) } as unknown as Bus;

/** Lets the watcher's pending request settle, then moves the clock. */
async function advance(clock: SimulatedClock, ms: number): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
  clock.advance(ms);
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe('watchEpisodesWorkers', () => {
  it('counts a worker whose trajectories arrived as seen, though it died before any ping: it says no worker is connected (not "none joined") and gives up after the wait', async () => {
    const clock = new SimulatedClock();
    const lines: string[] = [];
    let gone: NoEpisodesWorkerError | null = null;
    watchEpisodesWorkers({
      bus: emptyBus,
      runId: 'r-1',
      runName: 'r',
      checkMs: 1000,
      waitMs: 5000,
      progress: () => 'step 0: 3 of 16 trajectories in',
      log: (line) => lines.push(line),
      evidence: () => true,
      onGone: (error) => {
        gone = error;
      },
      clock,
    });
    for (let t = 0; t < 8 && gone === null; t++) await advance(clock, 1000);
    expect(lines[0]).toMatch(/^no episodes worker is connected \(step 0: 3 of 16 trajectories in\); waiting up to 5 s for one$/);
    expect(lines.join('\n')).not.toMatch(/joined|shown up/);
    expect(gone).toBeInstanceOf(NoEpisodesWorkerError);
  });

  it('without any sign of a worker, keeps waiting and says none has shown up yet', async () => {
    const clock = new SimulatedClock();
    const lines: string[] = [];
    let gone = false;
    const stop = watchEpisodesWorkers({
      bus: emptyBus,
      runId: 'r-1',
      runName: 'r',
      checkMs: 1000,
      waitMs: 5000,
      progress: () => 'step 0: 0 of 16 trajectories in',
      log: (line) => lines.push(line),
      evidence: () => false,
      onGone: () => {
        gone = true;
      },
      clock,
    });
    for (let t = 0; t < 10; t++) await advance(clock, 1000);
    stop();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/none has shown up yet .*start one with `turnwise worker --nats <url> --run r --role sampler,episodes`/);
    expect(gone).toBe(false);
  });
});
