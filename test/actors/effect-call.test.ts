import { describe, expect, it } from 'vitest';
import { abandonEffect, type EffectTarget, startEffect } from '../../src/actors/effect-call.js';
import { deferred } from './fakes.js';

type Event = { readonly type: 'DONE'; readonly output: number } | { readonly type: 'FAILED'; readonly error: unknown };

/** An actor stand-in that records what it is sent; `status` decides whether it still takes events. */
function target(status = 'active'): EffectTarget<Event> & { readonly sent: Event[]; status: string } {
  const sent: Event[] = [];
  return {
    sent,
    status,
    send(event) {
      sent.push(event);
    },
    getSnapshot() {
      return { status: this.status };
    },
  };
}

const done = (output: number): Event => ({ type: 'DONE', output });
const failed = (error: unknown): Event => ({ type: 'FAILED', error });
const settled = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

describe('effect calls started by an action', () => {
  it('sends the outcome as an event once the call resolves, never synchronously', async () => {
    const actor = target();
    startEffect(actor, async () => 7, done, failed);
    expect(actor.sent).toEqual([]);
    await settled();
    expect(actor.sent).toEqual([{ type: 'DONE', output: 7 }]);
  });

  it('turns a rejection and a synchronous throw alike into the failure event', async () => {
    const actor = target();
    const boom = new Error('boom');
    startEffect(actor, () => Promise.reject(boom), done, failed);
    await settled();
    startEffect(
      actor,
      () => {
        throw boom;
      },
      done,
      failed,
    );
    await settled();
    expect(actor.sent).toEqual([
      { type: 'FAILED', error: boom },
      { type: 'FAILED', error: boom },
    ]);
  });

  it('aborts an abandoned call and drops its outcome; abandoning after an answer aborts nothing', async () => {
    const actor = target();
    const answer = deferred<number>();
    let signal: AbortSignal | null = null;
    startEffect(
      actor,
      (s) => {
        signal = s;
        return answer.promise;
      },
      done,
      failed,
    );
    abandonEffect(actor);
    expect((signal as AbortSignal | null)?.aborted).toBe(true);
    answer.resolve(1);
    await settled();
    expect(actor.sent).toEqual([]);

    let second: AbortSignal | null = null;
    startEffect(
      actor,
      async (s) => {
        second = s;
        return 2;
      },
      done,
      failed,
    );
    await settled();
    abandonEffect(actor); // the exit action after the answer's transition
    expect((second as AbortSignal | null)?.aborted).toBe(false);
    expect(actor.sent).toEqual([{ type: 'DONE', output: 2 }]);
  });

  it('sends nothing to an actor that was stopped meanwhile', async () => {
    const actor = target();
    const answer = deferred<number>();
    startEffect(actor, () => answer.promise, done, failed);
    actor.status = 'stopped';
    answer.resolve(3);
    await settled();
    expect(actor.sent).toEqual([]);
  });

  it('keeps each actor its own call: abandoning one leaves the other', async () => {
    const a = target();
    const b = target();
    const slow = deferred<number>();
    startEffect(a, () => slow.promise, done, failed);
    startEffect(b, async () => 5, done, failed);
    abandonEffect(b);
    slow.resolve(4);
    await settled();
    expect(a.sent).toEqual([{ type: 'DONE', output: 4 }]);
    expect(b.sent).toEqual([]);
  });
});
