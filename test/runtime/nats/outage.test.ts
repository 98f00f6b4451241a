import { TimeoutError } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import { InvalidMessageError } from '../../../src/core/errors.js';
import { isOutage, NatsOutageError, outlastOutage } from '../../../src/runtime/nats/outage.js';

/** Runs `outlastOutage` to the end, moving the simulated clock whenever it waits. */
async function drive<T>(clock: SimulatedClock, work: Promise<T>): Promise<T | unknown> {
  let settled = false;
  const result = work.then(
    (v) => v,
    (e: unknown) => e,
  );
  void result.finally(() => {
    settled = true;
  });
  while (!settled) {
    for (let i = 0; i < 10; i++) await Promise.resolve();
    clock.advance(250);
  }
  return result;
}

describe('outlastOutage', () => {
  it('repeats a call through timeouts until the server answers, saying so once at each end', async () => {
    const clock = new SimulatedClock();
    const lines: string[] = [];
    let calls = 0;
    const result = await drive(
      clock,
      outlastOutage(
        'publishing weights v1',
        async () => {
          calls++;
          if (calls < 4) throw new TimeoutError();
          return 'acknowledged';
        },
        { clock, log: (l) => lines.push(l), waitMs: 60_000 },
      ),
    );
    expect(result).toBe('acknowledged');
    expect(calls).toBe(4);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^NATS unreachable while publishing weights v1 \(timeout\); retrying for up to 60 s$/);
    expect(lines[1]).toMatch(/^NATS is back: publishing weights v1 done after \d+\.\d s$/);
  });

  it('gives up with NatsOutageError once the outage lasted the wait', async () => {
    const clock = new SimulatedClock();
    const error = await drive(
      clock,
      outlastOutage(
        'collecting step 3',
        async () => {
          throw new TimeoutError();
        },
        { clock, waitMs: 5000 },
      ),
    );
    expect(error).toBeInstanceOf(NatsOutageError);
    expect((error as Error).message).toMatch(/NATS was unreachable for [5-7] s while collecting step 3 \(timeout\); the run is resumable once the server is back/);
  });

  it('passes any other error through at once', async () => {
    let calls = 0;
    const refused = new InvalidMessageError('turnwise.x.traj.s0', 'not a trajectory');
    await expect(
      outlastOutage('collecting step 0', async () => {
        calls++;
        throw refused;
      }),
    ).rejects.toBe(refused);
    expect(calls).toBe(1);
  });

  it('tells an outage from an answer: timeouts and JetStream 503s are outages, other JetStream errors are not', () => {
    const apiError = (status: number) => Object.assign(new Error('jetstream says'), { name: 'JetStreamApiError', status });
    expect(isOutage(new TimeoutError())).toBe(true);
    expect(isOutage(new Error('wrapped', { cause: new TimeoutError() }))).toBe(true);
    expect(isOutage(apiError(503))).toBe(true);
    expect(isOutage(apiError(404))).toBe(false);
    expect(isOutage(new Error('stream not found'))).toBe(false);
  });
});
